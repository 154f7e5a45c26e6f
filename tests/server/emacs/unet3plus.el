;;; unet3plus.el --- Emacs (eglot) as the client of gradguard  -*- lexical-binding: t -*-
;; Start gradguard with eglot as docs/editors.md configures it, open the UNet3+ seed,
;; read the diagnostics flymake shows, apply the preferred quick fix with eglot's own
;; code, see the diagnostic go, and write what happened as JSON for the Python test.
;; Run as: emacs --batch -Q -l unet3plus.el  (GG_PYTHON, GG_FILE, GG_OUT in env)

;; Debian's elpa-eglot; -Q skips site-start, so the system package folder is named here.
(setq package-directory-list '("/usr/share/emacs/site-lisp/elpa"))
(package-initialize)
(require 'eglot)
(require 'json)

(defvar gg-report nil)

(defun gg-finish ()
  (with-temp-file (getenv "GG_OUT")
    (insert (json-encode gg-report)))
  (kill-emacs 0))

(defun gg-diagnostics ()
  (mapcar (lambda (d)
            (list (cons 'line (line-number-at-pos (flymake-diagnostic-beg d)))
                  (cons 'col (save-excursion (goto-char (flymake-diagnostic-beg d))
                                             (current-column)))
                  (cons 'text (flymake-diagnostic-text d))))
          (flymake-diagnostics)))

(defun gg-wait-for (predicate seconds)
  "Let eglot and flymake work until PREDICATE holds or SECONDS pass."
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      ;; Batch Emacs is never idle, so flymake's idle timer never starts it.
      (flymake-start)
      (accept-process-output nil 0.1))
    (funcall predicate)))

(condition-case err
    (let ((python (getenv "GG_PYTHON")))
      ;; The configuration of docs/editors.md, with the test's interpreter.
      (add-to-list 'eglot-server-programs `(python-mode ,python "-m" "gradguard" "serve"))
      (find-file (getenv "GG_FILE"))
      (python-mode)
      (apply #'eglot (eglot--guess-contact))
      (unless (gg-wait-for #'flymake-diagnostics 60)
        (error "no diagnostics within 60 s"))
      (push (cons 'before (vconcat (gg-diagnostics))) gg-report)
      (goto-char (flymake-diagnostic-beg (car (flymake-diagnostics))))
      (let* ((actions (eglot-code-actions (point) (1+ (point)) "quickfix"))
             (preferred (seq-find (lambda (a) (plist-get a :isPreferred)) actions)))
        (push (cons 'actions (vconcat (mapcar (lambda (a) (plist-get a :title)) actions))) gg-report)
        (unless preferred (error "no preferred quick fix"))
        (push (cons 'applied (plist-get preferred :title)) gg-report)
        (eglot--read-execute-code-action (list preferred) (eglot-current-server) "quickfix"))
      (eglot--signal-textDocument/didChange)  ; eglot sends changes on an idle timer too
      (gg-wait-for (lambda () (null (flymake-diagnostics))) 30)
      (push (cons 'after (vconcat (gg-diagnostics))) gg-report)
      (push (cons 'text (buffer-substring-no-properties (point-min) (point-max))) gg-report)
      (gg-finish))
  (error (push (cons 'error (error-message-string err)) gg-report)
         (gg-finish)))
