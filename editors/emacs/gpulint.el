;;; gpulint.el --- gpulint's findings in Emacs, through eglot  -*- lexical-binding: t; -*-

;; Load it from your init file, after eglot (built into Emacs 29+; on
;; Emacs 28, `M-x package-install RET eglot', or Debian's elpa-eglot):
;;
;;   (load "/path/to/gpulint.el")
;;
;; Eglot runs one language server per buffer: the first entry of
;; `eglot-server-programs' whose major mode the buffer's is (or derives
;; from). The entry below comes first, so in the modes it names gpulint
;; takes the place of the server eglot would have started (bash-language-
;; server in sh-mode, yaml-language-server in yaml-mode, ...). Remove a
;; mode from `gpulint-major-modes' before loading this file to keep that
;; mode's own server.

(require 'eglot)

(defvar gpulint-server-command '("gpulint" "server")
  "How to run gpulint's language server: the program, then its arguments.")

;; A devcontainer.json shares its major mode with every JSON file, and a
;; Quadlet unit has none of its own: each gets a mode of its own, by name,
;; so that gpulint serves them and no other JSON file or unit.
(define-derived-mode gpulint-devcontainer-mode js-mode "devcontainer"
  "A devcontainer.json: JSON with comments, served by gpulint.")

(define-derived-mode gpulint-quadlet-mode conf-unix-mode "Quadlet"
  "A Podman Quadlet unit (`*.container'), served by gpulint.")

(add-to-list 'auto-mode-alist
             '("/\\.?devcontainer\\.json\\'" . gpulint-devcontainer-mode))
(add-to-list 'auto-mode-alist '("\\.container\\'" . gpulint-quadlet-mode))
;; SLURM batch scripts; without a name Emacs knows, their `#!' line decides.
(add-to-list 'auto-mode-alist '("\\.\\(?:sbatch\\|slurm\\)\\'" . sh-mode))

(defvar gpulint-major-modes
  '((gpulint-devcontainer-mode :language-id "jsonc")
    (gpulint-quadlet-mode :language-id "quadlet")
    ;; dockerfile-mode (MELPA) and Emacs 29's dockerfile-ts-mode.
    dockerfile-mode dockerfile-ts-mode
    ;; yaml-mode (MELPA) and Emacs 29's yaml-ts-mode: compose files,
    ;; Kubernetes manifests, GitHub workflows.
    yaml-mode yaml-ts-mode
    ;; Shell and SLURM batch scripts (bash-ts-mode derives from sh-mode).
    sh-mode
    ;; Every makefile-*-mode derives from makefile-mode.
    makefile-mode
    ;; markdown-mode and gfm-mode (MELPA).
    markdown-mode)
  "The major modes gpulint serves, as `eglot-server-programs' names them.")

(add-to-list 'eglot-server-programs
             (cons gpulint-major-modes gpulint-server-command))

;; Start gpulint when a file of the two modes above opens; for the others,
;; add `eglot-ensure' to the hooks of the modes you want it in.
(add-hook 'gpulint-devcontainer-mode-hook #'eglot-ensure)
(add-hook 'gpulint-quadlet-mode-hook #'eglot-ensure)

(provide 'gpulint)
;;; gpulint.el ends here
