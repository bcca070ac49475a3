package sessionref

// Reference names one session to recall, as a message or host gives it.
type Reference struct {
	SessionID string `json:"sessionId"`
	Label     string `json:"label"`
	// EmptyLabel marks a label given as the empty string (a mention
	// "@[](dsh-session:…)", or "label": ""), which dsh keeps as "". Without
	// it an empty Label means none was given, and normalisation uses the id.
	EmptyLabel bool `json:"-"`
}
