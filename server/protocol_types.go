package server

import "encoding/json"

// This file holds the few LSP shapes the server reads and writes. They are
// spelled out here, with encoding/json, rather than taken from the
// generated protocol package, whose union types would make every field a
// type switch; method names come from go.lsp.dev/protocol.

type clientCapabilities struct {
	General *struct {
		PositionEncodings []string `json:"positionEncodings"`
	} `json:"general"`
	TextDocument *struct {
		Completion *struct {
			CompletionItem *struct {
				InsertReplaceSupport bool     `json:"insertReplaceSupport"`
				LabelDetailsSupport  bool     `json:"labelDetailsSupport"`
				DocumentationFormat  []string `json:"documentationFormat"`
			} `json:"completionItem"`
		} `json:"completion"`
		Hover *struct {
			ContentFormat []string `json:"contentFormat"`
		} `json:"hover"`
	} `json:"textDocument"`
	Window *struct {
		WorkDoneProgress bool `json:"workDoneProgress"`
	} `json:"window"`
	Workspace *struct {
		DidChangeWatchedFiles *struct {
			DynamicRegistration    bool `json:"dynamicRegistration"`
			RelativePatternSupport bool `json:"relativePatternSupport"`
		} `json:"didChangeWatchedFiles"`
	} `json:"workspace"`
}

// registrationParams are the params of client/registerCapability.
type registrationParams struct {
	Registrations []registration `json:"registrations"`
}

// registration is one capability registered dynamically.
type registration struct {
	ID              string `json:"id"`
	Method          string `json:"method"`
	RegisterOptions any    `json:"registerOptions,omitempty"`
}

// didChangeWatchedFilesRegistrationOptions name the files a client
// watches for the server.
type didChangeWatchedFilesRegistrationOptions struct {
	Watchers []fileSystemWatcher `json:"watchers"`
}

// fileSystemWatcher is one glob; GlobPattern is a pattern string or a
// relativePattern.
type fileSystemWatcher struct {
	GlobPattern any `json:"globPattern"`
}

// relativePattern is a glob relative to a base folder (LSP 3.17).
type relativePattern struct {
	BaseURI string `json:"baseUri"`
	Pattern string `json:"pattern"`
}

// didChangeWatchedFilesParams are the params of
// workspace/didChangeWatchedFiles.
type didChangeWatchedFilesParams struct {
	Changes []fileEvent `json:"changes"`
}

// fileEvent is one change a client reports: created (1), changed (2) or
// deleted (3).
type fileEvent struct {
	URI  string `json:"uri"`
	Type int    `json:"type"`
}

type workspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

type initializeParams struct {
	ProcessID             *int               `json:"processId"`
	RootURI               *string            `json:"rootUri"`
	RootPath              *string            `json:"rootPath"`
	WorkspaceFolders      []workspaceFolder  `json:"workspaceFolders"`
	Capabilities          clientCapabilities `json:"capabilities"`
	InitializationOptions json.RawMessage    `json:"initializationOptions"`
	ClientInfo            *clientInfo        `json:"clientInfo"`
	Trace                 string             `json:"trace"`
}

type completionOptions struct {
	TriggerCharacters []string               `json:"triggerCharacters"`
	ResolveProvider   bool                   `json:"resolveProvider"`
	CompletionItem    *completionItemOptions `json:"completionItem,omitempty"`
}

type completionItemOptions struct {
	LabelDetailsSupport bool `json:"labelDetailsSupport"`
}

type documentLinkOptions struct {
	ResolveProvider bool `json:"resolveProvider"`
}

type textDocumentSyncOptions struct {
	OpenClose bool `json:"openClose"`
	// Change is 2: incremental.
	Change int `json:"change"`
}

type serverCapabilities struct {
	PositionEncoding   string                  `json:"positionEncoding"`
	TextDocumentSync   textDocumentSyncOptions `json:"textDocumentSync"`
	CompletionProvider completionOptions       `json:"completionProvider"`
	HoverProvider      bool                    `json:"hoverProvider"`
	DefinitionProvider bool                    `json:"definitionProvider"`
	// DocumentLinkProvider links session mentions to their previews.
	DocumentLinkProvider *documentLinkOptions `json:"documentLinkProvider,omitempty"`
	// The editor features the client supports (features_caps.go).
	CodeActionProvider      *codeActionOptions     `json:"codeActionProvider,omitempty"`
	ExecuteCommandProvider  *executeCommandOptions `json:"executeCommandProvider,omitempty"`
	InlayHintProvider       *inlayHintOptions      `json:"inlayHintProvider,omitempty"`
	WorkspaceSymbolProvider bool                   `json:"workspaceSymbolProvider,omitempty"`
	// Workspace announces workspace/textDocumentContent for the dsh-refls:
	// scheme to a client that declares it.
	Workspace    *workspaceServerCapabilities `json:"workspace,omitempty"`
	Experimental map[string]any               `json:"experimental,omitempty"`
}

// clientInfo is how the client names itself in initialize.
type clientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type initializeResult struct {
	Capabilities serverCapabilities `json:"capabilities"`
	ServerInfo   serverInfo         `json:"serverInfo"`
}

type textDocumentIdentifier struct {
	URI string `json:"uri"`
}

type textDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int32  `json:"version"`
	Text       string `json:"text"`
}

type didOpenParams struct {
	TextDocument textDocumentItem `json:"textDocument"`
}

type contentChange struct {
	Range *Range `json:"range"`
	Text  string `json:"text"`
}

type didChangeParams struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version int32  `json:"version"`
	} `json:"textDocument"`
	ContentChanges []contentChange `json:"contentChanges"`
}

type didCloseParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

type textDocumentPositionParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Position     Position               `json:"position"`
}

type didChangeConfigurationParams struct {
	Settings json.RawMessage `json:"settings"`
}

type setTraceParams struct {
	Value string `json:"value"`
}

type logTraceParams struct {
	Message string `json:"message"`
	Verbose string `json:"verbose,omitempty"`
}

type showMessageParams struct {
	Type    int    `json:"type"`
	Message string `json:"message"`
}

// LSP message types of window/showMessage.
const (
	messageTypeError   = 1
	messageTypeWarning = 2
)

type markupContent struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

type hoverResult struct {
	Contents markupContent `json:"contents"`
	Range    Range         `json:"range"`
}

type textEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

type insertReplaceEdit struct {
	NewText string `json:"newText"`
	Insert  Range  `json:"insert"`
	Replace Range  `json:"replace"`
}

type labelDetails struct {
	Detail      string `json:"detail,omitempty"`
	Description string `json:"description,omitempty"`
}

type completionItem struct {
	Label         string          `json:"label"`
	LabelDetails  *labelDetails   `json:"labelDetails,omitempty"`
	Kind          int             `json:"kind,omitempty"`
	Detail        string          `json:"detail,omitempty"`
	Documentation *markupContent  `json:"documentation,omitempty"`
	SortText      string          `json:"sortText,omitempty"`
	FilterText    string          `json:"filterText,omitempty"`
	TextEdit      any             `json:"textEdit,omitempty"`
	Data          *completionData `json:"data,omitempty"`
}

type completionList struct {
	IsIncomplete bool             `json:"isIncomplete"`
	Items        []completionItem `json:"items"`
}

// LSP completion item kinds.
const (
	completionKindFile      = 17
	completionKindReference = 18
	completionKindFolder    = 19
)

type diagnostic struct {
	Range    Range  `json:"range"`
	Severity int    `json:"severity"`
	Code     string `json:"code,omitempty"`
	Source   string `json:"source"`
	Message  string `json:"message"`
}

// LSP diagnostic severities.
const (
	severityError   = 1
	severityWarning = 2
)

type publishDiagnosticsParams struct {
	URI         string       `json:"uri"`
	Version     *int32       `json:"version,omitempty"`
	Diagnostics []diagnostic `json:"diagnostics"`
}

type progressParams struct {
	Token string `json:"token"`
	Value any    `json:"value"`
}

type workDoneProgressCreateParams struct {
	Token string `json:"token"`
}

type workDoneProgressValue struct {
	Kind        string `json:"kind"`
	Title       string `json:"title,omitempty"`
	Message     string `json:"message,omitempty"`
	Percentage  *int   `json:"percentage,omitempty"`
	Cancellable *bool  `json:"cancellable,omitempty"`
}
