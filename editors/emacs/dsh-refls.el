;;; dsh-refls.el --- dsh-refls with eglot: @-mentions of sessions and files  -*- lexical-binding: t; -*-

;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, convenience

;;; Commentary:

;; Registers the dsh-refls language server with eglot for prompt files and
;; adds two commands:
;;
;;   M-x dsh-refls-prepare  the message as it will be sent, and its context
;;   M-x dsh-refls-status   the server's index facts
;;
;; Both open read-only buffers that visit no file (never saved, never asked
;; about on exit, never managed by eglot, so never diagnosed).
;;
;;   (add-to-list 'load-path "~/src/dsh-refls/editors/emacs")
;;   (require 'dsh-refls)
;;   (setq dsh-refls-settings '(:sessionsRoot "~/.dsh/sessions"))
;;   (add-hook 'markdown-mode-hook #'eglot-ensure)   ; or text-mode-hook
;;
;; In a prompt type @ and complete with M-TAB (completion-at-point); typing
;; narrows the list on the server, and *Completions* keeps the server's
;; order (see `dsh-refls-server-order').

;;; Code:

(require 'eglot)
(require 'jsonrpc)
(require 'json)

(defgroup dsh-refls nil
  "@-mentions of dsh sessions and workspace files."
  :group 'tools)

(defcustom dsh-refls-program "dsh-refls"
  "The dsh-refls binary, looked up on `exec-path' when not absolute."
  :type 'string)

(defcustom dsh-refls-log-file
  (expand-file-name "dsh-refls.log" (or (getenv "XDG_CACHE_HOME") "~/.cache"))
  "Where the server logs; nil sends the log to eglot's stderr buffer."
  :type '(choice file (const nil)))

(defcustom dsh-refls-settings nil
  "Server options (SPEC 4.1) as a plist, e.g. (:sessionsRoot \"~/.dsh/sessions\").
Sent as initializationOptions and as the \"dsh\" configuration section."
  :type 'plist)

(defcustom dsh-refls-modes '(markdown-mode gfm-mode text-mode)
  "Major modes whose buffers dsh-refls serves."
  :type '(repeat symbol))

(defun dsh-refls--command (&optional _interactive)
  "The server command line for eglot."
  (append (list dsh-refls-program)
          (when dsh-refls-log-file
            (list "--log-file" (expand-file-name dsh-refls-log-file)))))

(defclass dsh-refls-server (eglot-lsp-server) ()
  :documentation "The dsh-refls language server.")

(cl-defmethod eglot-initialization-options ((_server dsh-refls-server))
  "Send `dsh-refls-settings' at initialization."
  (or (dsh-refls--settings) eglot--{}))

(defun dsh-refls--settings ()
  "`dsh-refls-settings' with sessionsRoot expanded."
  (let ((s (copy-sequence dsh-refls-settings)))
    (when (plist-get s :sessionsRoot)
      (setq s (plist-put s :sessionsRoot (expand-file-name (plist-get s :sessionsRoot)))))
    s))

(add-to-list 'eglot-server-programs
             (cons dsh-refls-modes (cons 'dsh-refls-server #'dsh-refls--command)))

;;; Completion in the server's order

;; The server narrows the list itself (isIncomplete, filterText) and sends
;; it ranked (sortText).  eglot 1.9 files its completions under the
;; category `eglot' (`eglot-capf' in later versions) with the styles
;; (flex basic); flex then re-sorts *Completions* by its own score, and
;; partial-completion's try step fails on labels that do not start with
;; the typed word.  In dsh-refls buffers this style takes what the table
;; answers as it is, and *Completions* shows it in eglot's sortText order.

(defcustom dsh-refls-server-order t
  "Non-nil: completion in dsh-refls buffers keeps the server's list and order.
It sets `completion-category-overrides' buffer-locally for eglot's
completion category to the style `dsh-refls-server'."
  :type 'boolean)

(defun dsh-refls--style-all (string table pred _point)
  "Every completion TABLE answers for STRING and PRED, unfiltered, unsorted."
  (let ((all (all-completions string table pred)))
    (when all (nconc all 0))))

(defun dsh-refls--style-try (string table pred point)
  "STRING unchanged at POINT while TABLE offers several completions.
nil when it offers none; the completion itself when it offers one."
  (let ((all (all-completions string table pred)))
    (cond ((null all) nil)
          ((cdr all) (cons string point))
          ((string= (car all) string) t)
          (t (cons (car all) (length (car all)))))))

(add-to-list 'completion-styles-alist
             '(dsh-refls-server dsh-refls--style-try dsh-refls--style-all
               "The completion table's own answer, as it is (dsh-refls)."))

(defvar-local dsh-refls--order-set nil
  "Non-nil when this buffer's `completion-category-overrides' is ours.")

(defun dsh-refls--use-server-order ()
  "In a buffer managed by dsh-refls, complete with the `dsh-refls-server' style."
  (cond ((and dsh-refls-server-order
              (eglot-managed-p)
              (cl-typep (eglot-current-server) 'dsh-refls-server))
         (setq-local completion-category-overrides
                     (append '((eglot (styles dsh-refls-server))
                               (eglot-capf (styles dsh-refls-server)))
                             (default-value 'completion-category-overrides)))
         (setq dsh-refls--order-set t))
        (dsh-refls--order-set
         (kill-local-variable 'completion-category-overrides)
         (setq dsh-refls--order-set nil))))

(add-hook 'eglot-managed-mode-hook #'dsh-refls--use-server-order)

(defun dsh-refls--server ()
  "The dsh-refls server of this buffer, or of any dsh-refls buffer."
  (or (let ((s (eglot-current-server)))
        (and s (cl-typep s 'dsh-refls-server) s))
      (cl-loop for servers being the hash-values of eglot--servers-by-project
               thereis (cl-find-if (lambda (s) (cl-typep s 'dsh-refls-server)) servers))
      (user-error "No dsh-refls server is running; open a prompt file first")))

(defun dsh-refls--show (name text)
  "Show TEXT in a read-only buffer NAME that visits no file."
  (let ((buf (get-buffer-create name)))
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert text)
        (goto-char (point-min)))
      (special-mode)
      (setq buffer-read-only t)
      (set-buffer-modified-p nil))
    (pop-to-buffer buf)
    buf))

(defun dsh-refls--text (content)
  "The text of a dsh/prepare CONTENT: a string or a vector of text blocks."
  (if (stringp content)
      content
    (mapconcat (lambda (b) (or (plist-get b :text) "")) content "\n")))

(defun dsh-refls-prepare (&optional preserve)
  "Prepare this buffer's message with dsh/prepare and show it with its context.
With a prefix argument PRESERVE, mentions are kept as written."
  (interactive "P")
  (let* ((server (dsh-refls--server))
         (res (jsonrpc-request server :dsh/prepare
                               (list :textDocument (eglot--TextDocumentIdentifier)
                                     :mode (if preserve "preserve" "replace"))))
         (ctx (plist-get res :additionalContext)))
    (dsh-refls--show
     "*dsh-refls prepared*"
     (concat "# Prepared message\n\n" (dsh-refls--text (plist-get res :content)) "\n"
             (if (and ctx (not (eq ctx :null)))
                 (concat "\n# Context (sent as a separate user message)\n\n"
                         (dsh-refls--text (plist-get ctx :content)) "\n")
               "\n(no session mentions: no context message)\n")))))

(defun dsh-refls--json-text (v)
  "V, a value eglot decoded from JSON, as JSON-like text."
  (cond ((eq v :json-false) "false")
        ((eq v t) "true")
        ((or (null v) (eq v :null)) "none")
        ((stringp v) v)
        ((numberp v) (number-to-string v))
        (t (let ((json-encoding-pretty-print nil))
             (json-encode v)))))

(defun dsh-refls-status ()
  "Show the dsh-refls index status (dsh/status)."
  (interactive)
  (let ((res (jsonrpc-request (dsh-refls--server) :dsh/status eglot--{})))
    (dsh-refls--show
     "*dsh-refls status*"
     (concat "# dsh-refls index status\n\n"
             (let ((out ""))
               (while res
                 (setq out (concat out (format "- %s: %s\n" (substring (symbol-name (car res)) 1)
                                               (dsh-refls--json-text (cadr res))))
                       res (cddr res)))
               out)))))

(provide 'dsh-refls)
;;; dsh-refls.el ends here
