package prepare

import (
	"strconv"

	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"
)

// The data object of §2.3.4 as JSON.stringify writes it, and the sizes
// retention measures it by.

// Prefixes of the data object of §2.3.4, whose key order is the contract's.
const (
	keySessionID    = `{"sessionId":`
	keyLabel        = `,"label":`
	keyCwd          = `,"cwd":`
	keySeq          = `,"capturedThroughSeq":`
	keyConversation = `,"conversation":[`
	keyRole         = `{"role":`
	keyText         = `,"text":`
)

// appendSnapshot appends the JSON.stringify form of d (tag-safe when asked).
func appendSnapshot(dst []byte, d snapshotData, tagSafe bool) []byte {
	dst = append(dst, keySessionID...)
	dst = jsjson.AppendText(dst, d.SessionID, tagSafe)
	dst = append(dst, keyLabel...)
	dst = jsjson.AppendText(dst, d.Label, tagSafe)
	dst = append(dst, keyCwd...)
	if d.Cwd == nil {
		dst = append(dst, "null"...)
	} else {
		dst = jsjson.AppendText(dst, *d.Cwd, tagSafe)
	}
	dst = append(dst, keySeq...)
	if d.CapturedThroughSeq == nil {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, *d.CapturedThroughSeq, 10)
	}
	dst = append(dst, keyConversation...)
	for i, t := range d.Conversation {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, keyRole...)
		dst = jsjson.AppendText(dst, t.Role, tagSafe)
		dst = append(dst, keyText...)
		dst = jsjson.AppendText(dst, t.Text, tagSafe)
		dst = append(dst, '}')
	}
	return append(dst, ']', '}')
}

// appendSnapshotList appends the tag-safe JSON array of data objects.
func appendSnapshotList(dst []byte, list []snapshotData) []byte {
	dst = append(dst, '[')
	for i, d := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendSnapshot(dst, d, true)
	}
	return append(dst, ']')
}

// snapshotHeadSize is the tag-safe size of d with an empty conversation.
func snapshotHeadSize(d snapshotData) int {
	d.Conversation = nil
	return len(appendSnapshot(nil, d, true))
}

// turnSize is the tag-safe size of one {"role","text"} object.
func turnSize(role, text string) int {
	return len(keyRole) + jsjson.TextLen(role, true) + len(keyText) + jsjson.TextLen(text, true) + 1
}
