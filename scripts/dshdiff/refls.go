package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// candidateCase is one candidate query on a store.
type candidateCase struct {
	ID    string `json:"id"`
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

// prepareCase is one message to prepare on a store.
type prepareCase struct {
	ID                string `json:"id"`
	Text              string `json:"text"`
	MaxReferenceBytes int    `json:"maxReferenceBytes"`
}

// storeCases is one store of the manifest the driver reads.
type storeCases struct {
	Root        string          `json:"root"`
	Compression string          `json:"compression"`
	Target      target          `json:"target"`
	Candidates  []candidateCase `json:"candidates"`
	Prepares    []prepareCase   `json:"prepares"`
}

// target is the session a message is written in.
type target struct {
	ID  string  `json:"id"`
	Cwd *string `json:"cwd,omitempty"`
}

// candidate is the part of a candidate both implementations give.
type candidate struct {
	SessionID string  `json:"sessionId"`
	Label     string  `json:"label"`
	Cwd       *string `json:"cwd,omitempty"`
	CreatedAt int64   `json:"createdAt"`
	// DisplayTitle is dsh-refls' addition (SPEC §2.2); dsh 0.1.1 has none.
	DisplayTitle string `json:"displayTitle,omitempty"`
}

// failure is an error result.
type failure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// reference is one entry of the context message's source.
type reference struct {
	SessionID          string `json:"sessionId"`
	Label              string `json:"label"`
	CapturedThroughSeq *int64 `json:"capturedThroughSeq"`
	Compacted          bool   `json:"compacted"`
	OriginalMessages   int    `json:"originalMessages"`
	RetainedMessages   int    `json:"retainedMessages"`
	OmittedMessages    int    `json:"omittedMessages"`
	OmittedBytes       int64  `json:"omittedBytes"`
	Truncated          bool   `json:"truncated"`
	InputIndex         int    `json:"inputIndex"`
	// CapturedFormatVersion is dsh-refls' addition for v1+ logs; the
	// generated stores are v0, where it is absent.
	CapturedFormatVersion *int `json:"capturedFormatVersion,omitempty"`
}

// source is the context message's source.
type source struct {
	Kind       string      `json:"kind"`
	Form       string      `json:"form"`
	Version    int         `json:"version"`
	References []reference `json:"references"`
}

// result is one case's result from either implementation.
type result struct {
	Candidates []candidate `json:"candidates,omitempty"`
	Content    *string     `json:"content,omitempty"`
	Prompt     *string     `json:"prompt,omitempty"`
	Source     *source     `json:"source,omitempty"`
	Error      *failure    `json:"error,omitempty"`
}

// failureOf is the result of a failed call.
func failureOf(err error) result {
	var e *sessionref.Error
	if errors.As(err, &e) {
		return result{Error: &failure{Code: string(e.Code), Message: err.Error()}}
	}
	return result{Error: &failure{Code: "UNCODED", Message: err.Error()}}
}

// runRefls runs every case of one store through dsh-refls' Go API.
func runRefls(ctx context.Context, sc storeCases, out map[string]result) error {
	ix := titles.NewIndex(sc.Root, titles.IndexOptions{})
	if err := ix.Build(ctx, nil); err != nil {
		return fmt.Errorf("indexing %s: %w", sc.Root, err)
	}
	snap := ix.Snapshot()
	targetCwd := ""
	if sc.Target.Cwd != nil {
		targetCwd = *sc.Target.Cwd
	}
	for _, c := range sc.Candidates {
		cands, _, err := snap.Candidates(titles.CandidateQuery{Query: c.Query, TargetID: sc.Target.ID, TargetCwd: targetCwd, Limit: c.Limit})
		if err != nil {
			out[c.ID] = failureOf(err)
			continue
		}
		r := result{Candidates: []candidate{}}
		for _, k := range cands {
			r.Candidates = append(r.Candidates, candidate{SessionID: k.SessionID, Label: k.Label, Cwd: k.Cwd, CreatedAt: k.CreatedAt, DisplayTitle: k.DisplayTitle})
		}
		out[c.ID] = r
	}
	for _, c := range sc.Prepares {
		res, err := prepare.PrepareText(ctx, snap, sc.Target.ID, c.Text, prepare.ModeReplace, nil, prepare.Limits{MaxReferenceBytes: c.MaxReferenceBytes})
		if err != nil {
			out[c.ID] = failureOf(err)
			continue
		}
		var content string
		if err := json.Unmarshal(res.Content, &content); err != nil {
			return fmt.Errorf("case %s: content is not a string: %w", c.ID, err)
		}
		r := result{Content: &content}
		if ac := res.AdditionalContext; ac != nil {
			if len(ac.Content) > 0 {
				p := ac.Content[0].Text
				r.Prompt = &p
			}
			raw, err := json.Marshal(ac.Source)
			if err != nil {
				return fmt.Errorf("case %s: %w", c.ID, err)
			}
			var s source
			if err := json.Unmarshal(raw, &s); err != nil {
				return fmt.Errorf("case %s: %w", c.ID, err)
			}
			r.Source = &s
		}
		out[c.ID] = r
	}
	return nil
}
