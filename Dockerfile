# gpulint as a container image: one statically linked binary, nothing else.
# The build context is only that binary (see .dockerignore); .ci/image builds
# it and the image, and tests them:
#
#   RUSTFLAGS="-C target-feature=+crt-static" \
#     cargo build --profile dist --locked --target x86_64-unknown-linux-gnu
#   docker build -t gpulint .
#   docker run --rm -v "$PWD:/src" gpulint check /src
FROM scratch
COPY target/x86_64-unknown-linux-gnu/dist/gpulint /usr/local/bin/gpulint
WORKDIR /src
ENTRYPOINT ["/usr/local/bin/gpulint"]
CMD ["check", "/src"]
