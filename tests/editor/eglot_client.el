;;; eglot_client.el --- Emacs and eglot as gpulint's LSP client  -*- lexical-binding: t; -*-

;; Emacs with eglot and the shipped config (editors/emacs/gpulint.el) and no
;; init file. Run by tests/it/editor.rs from the repository root:
;;
;;   GPULINT_BIN=target/debug/gpulint GPULINT_ATTACH='a<TAB>b' \
;;   GPULINT_DIAGNOSE='c' emacs --batch -l tests/editor/eglot_client.el
;;
;; It reports as tests/editor/nvim_client.lua does: each file of
;; GPULINT_ATTACH (tab-separated paths, the first one gpulint's) as
;; `attached<TAB>PATH<TAB>yes|no<TAB>ROOT' (the server's project root),
;; each of GPULINT_DIAGNOSE as `diagnostic<TAB>PATH<TAB>LINE<TAB>CODE<TAB>MESSAGE'
;; or `no-diagnostics<TAB>PATH', a failure as `error<TAB>WHAT'.

(setq gpulint-server-command (list (getenv "GPULINT_BIN") "server"))
(load (expand-file-name "editors/emacs/gpulint.el" default-directory))
;; What gpulint.el leaves to its user, for the modes a bare Emacs has.
(add-hook 'sh-mode-hook #'eglot-ensure)
(add-hook 'makefile-mode-hook #'eglot-ensure)

(defconst gpulint-test-wait 20
  "Seconds the server may take to start and lint one file (a debug build
on a loaded 2-core machine).")
(defconst gpulint-test-attached-wait 2
  "Seconds a buffer may take to be managed by a server already running.")

(defun gpulint-test-say (&rest fields)
  (princ (concat (mapconcat (lambda (f) (format "%s" f)) fields "\t") "\n")))

(defun gpulint-test-paths (variable)
  (split-string (or (getenv variable) "") "\t" t))

(defun gpulint-test-wait-until (seconds done)
  "Reads the servers' messages until DONE returns non-nil or SECONDS pass."
  (let ((until (+ (float-time) seconds)))
    (while (and (not (funcall done)) (< (float-time) until))
      (accept-process-output nil 0.05))
    (funcall done)))

(defun gpulint-test-server ()
  "The gpulint server managing the current buffer, if one is."
  (let ((server (and (bound-and-true-p eglot--managed-mode)
                     (eglot-current-server))))
    (and server
         (equal (plist-get (eglot--server-info server) :name) "gpulint")
         server)))

(defun gpulint-test-open (path)
  "Visits PATH as a command would: eglot-ensure connects after it."
  (set-buffer (find-file-noselect path))
  (run-hooks 'post-command-hook))

(defun gpulint-test-code (diagnostic)
  (let ((lsp (alist-get 'eglot-lsp-diag (flymake-diagnostic-data diagnostic))))
    (or (plist-get lsp :code) "")))

(defun gpulint-test-main ()
  (let ((running nil))
    (dolist (path (gpulint-test-paths "GPULINT_ATTACH"))
      (gpulint-test-open path)
      (gpulint-test-wait-until
       (if running gpulint-test-attached-wait gpulint-test-wait)
       #'gpulint-test-server)
      (let ((server (gpulint-test-server)))
        (setq running (or running server))
        (gpulint-test-say
         "attached" path (if server "yes" "no")
         (if server
             (directory-file-name
              (expand-file-name (project-root (eglot--project server))))
           "")))))
  (dolist (path (gpulint-test-paths "GPULINT_DIAGNOSE"))
    (gpulint-test-open path)
    ;; Flymake asks eglot for the diagnostics it holds when it starts a
    ;; check, which an idle timer would do in an interactive Emacs.
    (gpulint-test-wait-until
     gpulint-test-wait
     (lambda ()
       (when (bound-and-true-p flymake-mode)
         (flymake-start))
       (flymake-diagnostics)))
    (let ((diagnostics (flymake-diagnostics)))
      (unless diagnostics
        (gpulint-test-say "no-diagnostics" path))
      (dolist (d diagnostics)
        (gpulint-test-say
         "diagnostic" path
         (line-number-at-pos (flymake-diagnostic-beg d))
         (gpulint-test-code d)
         (replace-regexp-in-string "\n" " " (flymake-diagnostic-text d)))))))

(condition-case failure
    (gpulint-test-main)
  (error (gpulint-test-say "error" (error-message-string failure))))
;; Shut the servers down without asking.
(let ((eglot-autoshutdown t))
  (ignore-errors (eglot-shutdown-all)))
(kill-emacs 0)

;;; eglot_client.el ends here
