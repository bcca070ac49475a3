;;; dsh-refls.el --- dsh-refls with eglot: @-mentions of sessions and files  -*- lexical-binding: t; -*-

;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, convenience

;;; Commentary:

;; Registers the dsh-refls language server with eglot for prompt files and
;; adds three commands:
;;
;;   M-x dsh-refls-prepare  the message as it will be sent, and its context
;;   M-x dsh-refls-status   the server's index facts
;;   M-x dsh-refls-search   sessions found by what was said in them
;;                          (off with :recallSearch :json-false)
;;
;; M-. on a session mention and xref-find-apropos (sessions by title, id
;; or directory) open a session's recall preview, read-only, and
;; M-x dsh-refls-follow follows a mention's document link (a file on the
;; first line of its #L range, or a session's preview).
;;
;; All open read-only buffers that visit no file (never saved, never asked
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
Also :candidateOrder (\"active\" or \"created\"), :recallSearch,
:redactSecrets and :frecency (t, or :json-false for false; :frecency
ranks what you pick from the list first among the items that matched
alike, see `dsh-refls-forget-picks'), :directoryTokenBudget (tokens; 0
turns the directory budget check off).  Sent as initializationOptions
and as the \"dsh\" configuration section."
  :type 'plist)

(defcustom dsh-refls-session-scope nil
  "Which sessions `@' lists: \"all\", \"workspace\" or \"recent\".
nil leaves it to the server (\"all\").  Typing @here:, @recent: or @all:
chooses for one mention.  Sent as the server option sessionScope unless
`dsh-refls-settings' has :sessionScope."
  :type '(choice (const :tag "Server default (all)" nil)
                 (const "all") (const "workspace") (const "recent")))

(defcustom dsh-refls-show-automation-sessions nil
  "Non-nil: `@' also lists subagent children, webhook and prompt-less sessions.
nil leaves them to @all: and typed ids.  Sent as the server option
showAutomationSessions unless `dsh-refls-settings' has it."
  :type 'boolean)

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
  "`dsh-refls-settings' with sessionsRoot expanded and the scope options added."
  (let ((s (copy-sequence dsh-refls-settings)))
    (when (plist-get s :sessionsRoot)
      (setq s (plist-put s :sessionsRoot (expand-file-name (plist-get s :sessionsRoot)))))
    (when (and dsh-refls-session-scope (not (plist-member s :sessionScope)))
      (setq s (plist-put s :sessionScope dsh-refls-session-scope)))
    (when (and dsh-refls-show-automation-sessions (not (plist-member s :showAutomationSessions)))
      (setq s (plist-put s :showAutomationSessions t)))
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
  "STRING unchanged at POINT while TABLE offers completions; nil for none.
t when STRING is the only one.  A sole completion is not inserted here:
it is listed like several, since eglot replaces the typed text with the
item's edit only when the completion is chosen (a label inserted here
would stay as it is)."
  (let ((all (all-completions string table pred)))
    (cond ((null all) nil)
          ((and (null (cdr all)) (string= (car all) string)) t)
          (t (cons string point)))))

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

;;; Frecency

;; The server counts every session and file picked from the list per
;; workspace and ranks them first among the items that matched alike.
;; eglot runs no item commands; the server counts what the accepted edit
;; inserts (docs/search.md, "Frecency").

(defun dsh-refls-forget-picks ()
  "Forget which sessions and files were picked from the list in this workspace."
  (interactive)
  (let* ((res (jsonrpc-request (dsh-refls--server) :workspace/executeCommand
                               (list :command "dsh-refls.forgetPicks" :arguments [])))
         (n (plist-get res :forgotten)))
    (unless (numberp n)
      (error "dsh-refls: the server answered the forget command with %S" res))
    (message "dsh-refls: forgot the picks of %d sessions and files" n)
    n))

;;; Recall previews, xref and search

(defun dsh-refls--preview-buffer (server params)
  "A read-only buffer with the recall preview dsh/preview answers for PARAMS.
PARAMS is (:uri URI) for a dsh-refls: preview URI or (:sessionId ID)."
  (let* ((res (jsonrpc-request server :dsh/preview params))
         (title (or (plist-get res :title) (plist-get res :sessionId) "session"))
         (buf (get-buffer-create (format "*dsh-refls preview: %s*" title))))
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (or (plist-get res :markdown) ""))
        (goto-char (point-min)))
      (special-mode)
      (setq buffer-read-only t)
      (set-buffer-modified-p nil))
    (dsh-refls--show-hit server buf res)
    buf))

(defun dsh-refls--goto-lsp-position (server pos)
  "Move point to POS, an LSP position in SERVER's position encoding.
A column past the end of its line is the end of the line."
  (let ((enc (or (ignore-errors (plist-get (eglot--capabilities server) :positionEncoding))
                 "utf-16"))
        (units (plist-get pos :character)))
    (goto-char (point-min))
    (forward-line (plist-get pos :line))
    (let ((eol (line-end-position)))
      (while (and (> units 0) (< (point) eol))
        (let ((c (char-after)))
          (setq units (- units (pcase enc
                                 ("utf-8" (length (encode-coding-string (char-to-string c) 'utf-8)))
                                 ("utf-32" 1)
                                 (_ (if (> c #xFFFF) 2 1))))))
        (forward-char 1)))))

(defface dsh-refls-hit '((t :inherit highlight))
  "Face of a search hit in a recall preview opened from it.")

(defun dsh-refls--show-hit (server buf res)
  "Put point of BUF on the hit the dsh/preview answer RES selects.
The hit's words get the face `dsh-refls-hit'."
  (let ((sel (plist-get res :selectionRange)))
    (when sel
      (with-current-buffer buf
        (let ((end (progn (dsh-refls--goto-lsp-position server (plist-get sel :end)) (point)))
              (start (progn (dsh-refls--goto-lsp-position server (plist-get sel :start)) (point))))
          (when (> end start)
            (overlay-put (make-overlay start end) 'face 'dsh-refls-hit)))))))

(defun dsh-refls--preview-uri-p (uri)
  "Non-nil when URI is a dsh-refls: preview URI."
  (and (stringp uri) (string-prefix-p "dsh-refls:" uri)))

(cl-defstruct (dsh-refls--preview-location
               (:constructor dsh-refls--preview-location (uri server)))
  "Where a dsh-refls: preview URI points: its preview, read when visited."
  uri server)

(cl-defmethod xref-location-marker ((l dsh-refls--preview-location))
  "The start of the recall preview of L, read with dsh/preview."
  (with-current-buffer (dsh-refls--preview-buffer
                        (dsh-refls--preview-location-server l)
                        (list :uri (dsh-refls--preview-location-uri l)))
    (copy-marker (point-min))))

(cl-defmethod xref-location-group ((_l dsh-refls--preview-location))
  "Recall previews are grouped under one heading."
  "dsh-refls recall previews")

(defun dsh-refls--xref-item (server summary uri range)
  "An xref item for SUMMARY at URI and RANGE; previews open read-only."
  (if (dsh-refls--preview-uri-p uri)
      (xref-make summary (dsh-refls--preview-location uri server))
    (let ((start (plist-get range :start)))
      (xref-make summary (xref-make-file-location
                          (eglot--uri-to-path uri)
                          (1+ (or (plist-get start :line) 0))
                          (or (plist-get start :character) 0))))))

(defun dsh-refls--xref-backend ()
  "The dsh-refls xref backend in buffers the dsh-refls server manages."
  (and (eglot-managed-p) (cl-typep (eglot-current-server) 'dsh-refls-server)
       'dsh-refls))

(cl-defmethod xref-backend-identifier-at-point ((_backend (eql dsh-refls)))
  "The word at point, remembering where point was."
  (propertize (or (thing-at-point 'symbol t) "@") 'dsh-refls-point (point)))

(cl-defmethod xref-backend-definitions ((_backend (eql dsh-refls)) identifier)
  "textDocument/definition where IDENTIFIER was taken: a mention's preview."
  (let ((server (eglot-current-server))
        (pos (or (get-text-property 0 'dsh-refls-point identifier) (point))))
    ;; The mention may just have been typed: send it first.
    (eglot--signal-textDocument/didChange)
    (save-excursion
      (goto-char pos)
      (let ((locs (jsonrpc-request server :textDocument/definition
                                   (eglot--TextDocumentPositionParams))))
        (when (and locs (not (vectorp locs))) (setq locs (vector locs)))
        (mapcar (lambda (loc)
                  (dsh-refls--xref-item server "recall preview"
                                        (or (plist-get loc :uri) (plist-get loc :targetUri))
                                        (or (plist-get loc :range) (plist-get loc :targetRange))))
                locs)))))

(cl-defmethod xref-backend-apropos ((_backend (eql dsh-refls)) pattern)
  "Sessions matching PATTERN (workspace/symbol), each opening its preview."
  (let ((server (eglot-current-server)))
    (mapcar (lambda (sym)
              (let ((loc (plist-get sym :location)))
                (dsh-refls--xref-item
                 server
                 (concat (plist-get sym :name)
                         (let ((c (plist-get sym :containerName)))
                           (if (and (stringp c) (not (string-empty-p c))) (concat " · " c) "")))
                 (plist-get loc :uri) (plist-get loc :range))))
            (jsonrpc-request server :workspace/symbol (list :query pattern)))))

(cl-defmethod xref-backend-references ((_backend (eql dsh-refls)) identifier)
  "References as eglot finds them."
  (xref-backend-references 'eglot identifier))

(defun dsh-refls--use-xref ()
  "Put the dsh-refls xref backend first in buffers dsh-refls manages."
  (if (dsh-refls--xref-backend)
      (add-hook 'xref-backend-functions #'dsh-refls--xref-backend nil t)
    (remove-hook 'xref-backend-functions #'dsh-refls--xref-backend t)))

(add-hook 'eglot-managed-mode-hook #'dsh-refls--use-xref)

(defun dsh-refls-follow ()
  "Follow the document link of the mention at point (textDocument/documentLink).
A file mention visits the file, on the first line of its range for
@path#L10-20; a session mention shows its recall preview.  eglot 1.9
has no document links of its own."
  (interactive)
  (let* ((server (eglot--current-server-or-lose))
         (links (progn (eglot--signal-textDocument/didChange)
                       (jsonrpc-request server :textDocument/documentLink
                                        (list :textDocument (eglot--TextDocumentIdentifier)))))
         (target (cl-loop for link across links
                          for (beg . end) = (eglot--range-region (plist-get link :range))
                          when (and (<= beg (point)) (< (point) end))
                          return (plist-get link :target))))
    (cond ((null target) (user-error "No mention with a link at point"))
          ((dsh-refls--preview-uri-p target)
           (pop-to-buffer (dsh-refls--preview-buffer server (list :uri target))))
          (t (let* ((hash (string-match "#" target))
                    (uri (if hash (substring target 0 hash) target))
                    (fragment (if hash (substring target (1+ hash)) ""))
                    (line (and (string-match "\\`L\\([0-9]+\\)" fragment)
                               (string-to-number (match-string 1 fragment)))))
               (find-file (eglot--uri-to-path uri))
               (when line
                 (goto-char (point-min))
                 (forward-line (1- line))))))))

(defvar dsh-refls-search-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'dsh-refls-search-open)
    map)
  "Keys of `dsh-refls-search-mode'.")

(define-derived-mode dsh-refls-search-mode special-mode "dsh-refls search"
  "Sessions found by `dsh-refls-search'; RET opens one's recall preview.")

(defvar-local dsh-refls--search-server nil
  "The server that answered this search buffer.")

(defvar-local dsh-refls--search-query nil
  "The query this search buffer answers.")

(defun dsh-refls--search-text (query results)
  "The text of the search buffer for QUERY and its RESULTS (a vector)."
  (if (zerop (length results))
      (format "# dsh-refls search: %s\n\nNo session holds what you searched for.\n" query)
    (concat
     (format "# dsh-refls search: %s\n\n%d session%s. RET on a result opens its recall preview, on a match at its message.\n"
             query (length results) (if (= (length results) 1) "" "s"))
     (mapconcat
      (lambda (r)
        (let* ((id (plist-get r :sessionId))
               (cwd (plist-get r :cwd))
               (created (plist-get r :createdAt))
               (text (concat
                      "\n## " (or (plist-get r :displayTitle) (plist-get r :label)) "\n"
                      (mapconcat #'identity
                                 (delq nil (list (and (stringp cwd) cwd)
                                                 (and (numberp created) (> created 0)
                                                      (concat "created "
                                                              (format-time-string "%Y-%m-%d %H:%M"
                                                                                  (/ created 1000))))
                                                 (concat "id " id)))
                                 " · ")
                      "\n"
                      (mapconcat (lambda (m)
                                   (propertize
                                    (format "- %s #%s: %s\n" (plist-get m :role) (plist-get m :seq)
                                            (replace-regexp-in-string "[\r\n]" " " (or (plist-get m :excerpt) "")))
                                    'dsh-refls-seq (plist-get m :seq)))
                                 (plist-get r :matches) ""))))
          (propertize text 'dsh-refls-session id)))
      results ""))))

(defun dsh-refls-search (query)
  "Find sessions by what was said in them (dsh/search) and list them.
Every word of QUERY must occur in a session; \"a phrase\" as written.
The server answers it unless `dsh-refls-settings' has
(:recallSearch :json-false).  RET on a result opens its recall preview."
  (interactive (list (read-string "Search sessions: ")))
  (when (string-empty-p (string-trim query))
    (user-error "Search for what? Type words or \"a phrase\""))
  (let* ((server (dsh-refls--server))
         (results (jsonrpc-request server :dsh/search (list :query query :limit 50)))
         (buf (get-buffer-create "*dsh-refls search*")))
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (dsh-refls--search-text query results))
        (goto-char (point-min)))
      (dsh-refls-search-mode)
      (setq-local dsh-refls--search-server server)
      (setq-local dsh-refls--search-query query)
      (set-buffer-modified-p nil))
    (pop-to-buffer buf)))

(defun dsh-refls-search-open ()
  "Open the recall preview of the search result at point.
On a match, the preview shows its message with point on the hit."
  (interactive)
  (let ((id (get-text-property (point) 'dsh-refls-session))
        (seq (get-text-property (point) 'dsh-refls-seq)))
    (unless id (user-error "Not on a search result"))
    (let* ((buf (dsh-refls--preview-buffer
                 (or dsh-refls--search-server (dsh-refls--server))
                 (if (numberp seq)
                     (list :sessionId id :seq seq :query dsh-refls--search-query)
                   (list :sessionId id))))
           (pt (with-current-buffer buf (point))))
      (pop-to-buffer buf)
      ;; A window that showed the buffer before keeps its own point.
      (goto-char pt)
      (ignore-errors (recenter)))))

;;; Continue from a session

(defconst dsh-refls--continue-command "dsh-refls.continueFrom"
  "The server's command that answers a prompt continuing from a session.")

(cl-defmethod eglot-client-capabilities :around ((_server dsh-refls-server))
  "Declare that dsh-refls.el opens the prompts of `dsh-refls--continue-command'.
The server then offers its code action \"Continue from this session\"."
  (let ((caps (cl-call-next-method)))
    (plist-put caps :experimental (list :dshContinueFrom t))))

(defun dsh-refls--continue-id (action)
  "The session id of ACTION when it is a continue Command or CodeAction."
  (let* ((cmd (plist-get action :command))
         (cmd (if (stringp cmd) action cmd)))
    (when (and (listp cmd) (equal (plist-get cmd :command) dsh-refls--continue-command)
               (not (plist-get action :edit)))
      (let ((id (elt (plist-get cmd :arguments) 0)))
        (and (stringp id) id)))))

;; eglot 1.9 runs a code action's command through `eglot-execute-command'
;; (the command a symbol); later eglot through `eglot-execute'.
(cl-defmethod eglot-execute-command :around ((server dsh-refls-server) command arguments)
  "Open the prompt the server answers for COMMAND `dsh-refls--continue-command'."
  (if (equal (format "%s" command) dsh-refls--continue-command)
      (dsh-refls--continue-with server (elt arguments 0))
    (cl-call-next-method server command arguments)))

(cl-defmethod eglot-execute :around ((server dsh-refls-server) action)
  "Open the prompt the server answers for a continue ACTION."
  (let ((id (dsh-refls--continue-id action)))
    (if id
        (dsh-refls--continue-with server id)
      (cl-call-next-method server action))))

(defun dsh-refls--continue-with (server id)
  "Ask SERVER for the prompt that continues from session ID and open it.
The prompt opens in a new buffer, in `markdown-mode' when it is there,
else `text-mode', with point at its end.  The buffer visits no file;
save it into the workspace (\\[write-file]) to have eglot manage it."
  (let* ((res (jsonrpc-request server :workspace/executeCommand
                               (list :command dsh-refls--continue-command :arguments (vector id))))
         (text (plist-get res :text)))
    (unless (stringp text)
      (error "dsh-refls: the server answered %s with %S" dsh-refls--continue-command res))
    (let ((buf (generate-new-buffer (format "*dsh-refls continue: %s*" (or (plist-get res :title) id)))))
      (with-current-buffer buf
        (insert text)
        (if (fboundp 'markdown-mode) (markdown-mode) (text-mode))
        (goto-char (point-max)))
      (pop-to-buffer buf)
      buf)))

(defun dsh-refls-continue (&optional id)
  "Open a new prompt that continues from a session: its mention, its last
request and answer quoted.  The session is ID, else that of the mention
at point (the server's code action there says which), else one read
with `completing-read' from the sessions the server lists first."
  (interactive)
  (let* ((server (dsh-refls--server))
         (id (or id
                 (and (eglot-managed-p)
                      (eq (eglot-current-server) server)
                      (progn
                        (eglot--signal-textDocument/didChange)
                        (cl-some #'dsh-refls--continue-id
                                 (jsonrpc-request server :textDocument/codeAction
                                                  (list :textDocument (eglot--TextDocumentIdentifier)
                                                        :range (list :start (eglot--pos-to-lsp-position (point))
                                                                     :end (eglot--pos-to-lsp-position (point)))
                                                        :context (list :diagnostics []))))))
                 (let* ((cands (jsonrpc-request server :dsh/candidates (list :query "")))
                        (choices (cl-loop for c across cands
                                          collect (cons (format "%s  %s" (plist-get c :displayTitle) (plist-get c :sessionId))
                                                        (plist-get c :sessionId)))))
                   (unless choices (user-error "No session to continue from"))
                   (cdr (assoc (completing-read "Continue from session: " choices nil t) choices))))))
    (dsh-refls--continue-with server id)))

(provide 'dsh-refls)
;;; dsh-refls.el ends here
