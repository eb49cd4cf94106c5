//! What compose-go's canonical form refuses in `ports:` once the schema
//! has accepted it: a port spec docker/go-connections cannot parse
//! (`"a"`, `"80/tcpx"`, `"70000"`) and a number that is no Go `int`
//! (`1.5`). The schema allows any number or string there, so Compose
//! refuses these only after it validates.

use crate::merge::UnicityRefusal;
use crate::syntax::tree::{Kind, Node};
use serde_json::Value;
use std::net::IpAddr;

/// The first port of a service that compose-go's `transformPorts` refuses,
/// in its words.
pub(crate) fn port_refusal(root: &Node) -> Option<UnicityRefusal> {
    let services = root.get("services")?;
    services.entries().iter().find_map(|service| {
        let ports = service.value.get("ports")?;
        let Kind::Sequence(items) = &ports.kind else {
            return None;
        };
        items.iter().find_map(|item| {
            // A list or mapping is the schema's to judge (and may be an
            // alias bomb, never decoded whole here).
            if !matches!(item.kind, Kind::Scalar { .. }) {
                return None;
            }
            let message = match crate::schema::compose::decoded(item) {
                Value::Number(n) if n.is_i64() => parse_both(&n.to_string()).err()?,
                // Interpolated and known (an unknown variable leaves the
                // spec to the shell, and nothing is said of it).
                Value::String(_) => parse_both(item.str()?).err()?,
                other => format!(
                    "services.{}.ports: invalid type {} for port",
                    service.key,
                    go_number_type(&other)
                ),
            };
            Some(UnicityRefusal {
                message,
                at: item.src,
                service: Some(service.key.clone()),
            })
        })
    })
}

fn go_number_type(value: &Value) -> &'static str {
    match value {
        Value::Number(n) if n.is_u64() => "uint64",
        Value::Number(_) => "float64",
        Value::Bool(_) => "bool",
        Value::Null => "<nil>",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
        Value::String(_) => "string",
    }
}

/// A spec refused only when both readings of it refuse: go-connections
/// v0.4 (the words Debian's Compose 2.40.3 prints, which CI's judge is)
/// and v0.6 (upstream Compose 2.40's), which differ at the edges (an
/// unbracketed IPv6 host, a second `/`). Where they differ, whether the
/// user's Compose refuses it is not known, and nothing is said.
fn parse_both(spec: &str) -> Result<(), String> {
    match (parse_v04(spec), parse_v06(spec)) {
        (Err(words), Err(_)) => Err(words),
        _ => Ok(()),
    }
}

fn split_parts(spec: &str) -> (String, &str, &str) {
    let parts: Vec<&str> = spec.split(':').collect();
    let n = parts.len();
    match n {
        1 => (String::new(), "", parts[0]),
        2 => (String::new(), parts[0], parts[1]),
        3 => (parts[0].to_string(), parts[1], parts[2]),
        _ => (parts[..n - 2].join(":"), parts[n - 2], parts[n - 1]),
    }
}

/// Go's `strconv.ParseUint(text, 10, 16)`.
fn port_number(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u64>().ok().filter(|&n| n <= 65535)
}

/// go-connections' `ParsePortRange`: `80`, or `8000-9000` (a third part
/// is ignored).
fn port_range(text: &str) -> Option<(u64, u64)> {
    if !text.contains('-') {
        let start = port_number(text)?;
        return Some((start, start));
    }
    let mut parts = text.split('-');
    let start = port_number(parts.next()?)?;
    let end = port_number(parts.next()?)?;
    (end >= start).then_some((start, end))
}

/// Go's `net.SplitHostPort(host + ":")`'s host, or its error.
fn split_host(host: &str) -> Result<String, String> {
    let address = format!("{host}:");
    let error = |why: &str| Err(format!("address {address}: {why}"));
    let colon = address.len() - 1;
    let (found, rest_from, close_from) = if address.starts_with('[') {
        let Some(end) = address.find(']') else {
            return error("missing ']' in address");
        };
        if end + 1 != colon {
            return if address.as_bytes()[end + 1] == b':' {
                error("too many colons in address")
            } else {
                error("missing port in address")
            };
        }
        (address[1..end].to_string(), 1, end + 1)
    } else {
        let found = &address[..colon];
        if found.contains(':') {
            return error("too many colons in address");
        }
        (found.to_string(), 0, 0)
    };
    if address[rest_from..].contains('[') {
        return error("unexpected '[' in address");
    }
    if address[close_from..].contains(']') {
        return error("unexpected ']' in address");
    }
    Ok(found)
}

fn is_ip(text: &str) -> bool {
    text.parse::<IpAddr>().is_ok()
}

fn ranges_fit(container: (u64, u64), host: Option<(u64, u64)>) -> bool {
    match host {
        None => true,
        Some((start, end)) => {
            container.1 - container.0 == end - start || container.0 == container.1
        }
    }
}

fn parse_v04(spec: &str) -> Result<(), String> {
    let (raw_ip, host_port, container) = split_parts(spec);
    let parts: Vec<&str> = container.split('/').collect();
    let (proto, container) = if container.is_empty() || parts[0].is_empty() {
        ("", "")
    } else if parts.len() == 1 {
        ("tcp", container)
    } else if parts[1].is_empty() {
        ("tcp", parts[0])
    } else {
        (parts[1], parts[0])
    };
    let ip = split_host(&raw_ip).map_err(|why| format!("Invalid ip address {raw_ip}: {why}"))?;
    if !ip.is_empty() && !is_ip(&ip) {
        return Err(format!("Invalid ip address: {ip}"));
    }
    if container.is_empty() {
        return Err(format!("No port specified: {spec}<empty>"));
    }
    let range = port_range(container).ok_or(format!("Invalid containerPort: {container}"))?;
    let host = match host_port {
        "" => None,
        text => Some(port_range(text).ok_or(format!("Invalid hostPort: {text}"))?),
    };
    if !ranges_fit(range, host) {
        return Err(format!(
            "Invalid ranges specified for container and host Ports: {container} and {host_port}"
        ));
    }
    if !matches!(proto.to_lowercase().as_str(), "tcp" | "udp" | "sctp") {
        return Err(format!("Invalid proto: {proto}"));
    }
    Ok(())
}

fn parse_v06(spec: &str) -> Result<(), String> {
    let (ip, host_port, container) = split_parts(spec);
    let (container, proto) = container.split_once('/').unwrap_or((container, ""));
    let proto = match (container, proto) {
        ("", _) => String::new(),
        (_, "") => "tcp".to_string(),
        (_, proto) => proto.to_lowercase(),
    };
    if !matches!(proto.as_str(), "tcp" | "udp" | "sctp") {
        return Err(format!("invalid proto: {proto}"));
    }
    let ip = if ip.starts_with('[') {
        split_host(&ip)?
    } else {
        ip
    };
    if !ip.is_empty() && !is_ip(&ip) {
        return Err(format!("invalid IP address: {ip}"));
    }
    if container.is_empty() {
        return Err(format!("no port specified: {spec}<empty>"));
    }
    let range = port_range(container).ok_or(format!("invalid containerPort: {container}"))?;
    let host = match host_port {
        "" => None,
        text => Some(port_range(text).ok_or(format!("invalid hostPort: {text}"))?),
    };
    if !ranges_fit(range, host) {
        return Err(format!(
            "invalid ranges specified for container and host Ports: {container} and {host_port}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_compose_reads_are_accepted() {
        for spec in [
            "80",
            "8080:80",
            "127.0.0.1:8080:80",
            "127.0.0.1::80",
            "[::1]:8080:80",
            "8000-8010:8000-8010",
            "9000-9010:80",
            "80/udp",
            "80/UDP",
            "8080:80/sctp",
            "65535",
        ] {
            assert_eq!(parse_both(spec), Ok(()), "{spec}");
        }
    }

    #[test]
    fn specs_both_readings_refuse_are_refused_in_compose_words() {
        for (spec, words) in [
            ("a", "Invalid containerPort: a"),
            ("70000", "Invalid containerPort: 70000"),
            ("-1", "Invalid containerPort: -1"),
            ("x:80", "Invalid hostPort: x"),
            ("80/tcpx", "Invalid proto: tcpx"),
            ("8080:", "No port specified: 8080:<empty>"),
            ("abc:8080:80", "Invalid ip address: abc"),
            (
                "8000-8001:9000-9005",
                "Invalid ranges specified for container and host Ports: 9000-9005 and 8000-8001",
            ),
            ("90-80", "Invalid containerPort: 90-80"),
        ] {
            assert_eq!(parse_both(spec), Err(words.to_string()), "{spec}");
        }
    }

    #[test]
    fn specs_the_two_readings_disagree_on_are_not_refused() {
        // v0.4 refuses an unbracketed IPv6 host, v0.6 reads it.
        assert!(parse_v04("::1:8080:80").is_err());
        assert_eq!(parse_v06("::1:8080:80"), Ok(()));
        assert_eq!(parse_both("::1:8080:80"), Ok(()));
    }
}
