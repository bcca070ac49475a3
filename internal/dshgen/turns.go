package dshgen

// openTurn follows, as the generator writes, whether the log ends inside a
// turn, so Expected can say how many synthetic closers a reader appends
// (SPEC §1.7 "Open last turn": one tool/result per unsettled tool call of
// the open step, a step/end if a step is open, a turn/end).
type openTurn struct {
	turn, step bool
	// calls are the tool calls requested since the last turn or step
	// boundary and not yet answered; started says a tool/call was logged.
	calls []openCall
}

type openCall struct {
	id      string
	started bool
}

// boundary records a turn or step boundary event.
func (o *openTurn) boundary(typ string) {
	switch typ {
	case "turn/start":
		*o = openTurn{turn: true}
	case "turn/end":
		*o = openTurn{}
	case "step/start":
		o.step = true
	case "step/end":
		o.step, o.calls = false, nil
	}
}

// request records an assistant tool-call block.
func (o *openTurn) request(id string) {
	for i := range o.calls {
		if o.calls[i].id == id {
			o.calls[i] = openCall{id: id}
			return
		}
	}
	o.calls = append(o.calls, openCall{id: id})
}

// start records a tool/call event.
func (o *openTurn) start(id string) {
	for i := range o.calls {
		if o.calls[i].id == id {
			o.calls[i].started = true
		}
	}
}

// settle records a tool/result event.
func (o *openTurn) settle(id string) {
	for i := range o.calls {
		if o.calls[i].id == id {
			o.calls = append(o.calls[:i], o.calls[i+1:]...)
			return
		}
	}
}

// closers is how many synthetic events close the log, and the outcome of
// each synthetic tool result ("TOOL_OUTCOME_UNKNOWN" or "TOOL_NOT_STARTED").
func (o *openTurn) closers() (int, []string) {
	if !o.turn {
		return 0, nil
	}
	var outcomes []string
	for _, c := range o.calls {
		if c.started {
			outcomes = append(outcomes, "TOOL_OUTCOME_UNKNOWN")
		} else {
			outcomes = append(outcomes, "TOOL_NOT_STARTED")
		}
	}
	n := len(outcomes) + 1
	if o.step {
		n++
	}
	return n, outcomes
}
