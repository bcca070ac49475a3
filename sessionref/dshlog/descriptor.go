package dshlog

import "encoding/json"

// descriptorV2Label applies the v0–v3 rule of §1.5: a version-2
// subagent/descriptor decides the display title (its label, or none);
// descriptors of other versions are ignored (ok false).
func descriptorV2Label(data json.RawMessage) (label string, ok bool) {
	var d struct {
		Version json.Number `json:"version"`
		Label   *string     `json:"label"`
	}
	if json.Unmarshal(data, &d) != nil || d.Version != "2" {
		return "", false
	}
	if d.Label != nil {
		return *d.Label, true
	}
	return "", true
}

// descriptorKey reports whether key belongs in a version-3 descriptor of
// mode (dsh 0.2 packages/subagent/subagent/src/descriptor.ts): one-shot
// descriptors carry version, mode, provider and label; continuable ones
// may add the agent settings, persona and tool filter.
func descriptorKey(mode, key string) bool {
	switch key {
	case "version", "mode", "provider", "label":
		return true
	case "agentProvider", "agentModel", "agentReasoningEffort", "persona", "toolFilter":
		return mode == "continuable"
	}
	return false
}

// descriptorV3Label applies the v4 rule of §1.7: the last descriptor
// decides; a well-formed version-3 descriptor gives its label (ok), any
// other version or a malformed payload gives none (dsh 0.2
// packages/subagent/subagent/src/projection.ts resets the identity).
func descriptorV3Label(data json.RawMessage) (label string, ok bool) {
	var d map[string]json.RawMessage
	if json.Unmarshal(data, &d) != nil {
		return "", false
	}
	var version json.Number
	var mode, provider string
	if json.Unmarshal(d["version"], &version) != nil || version != "3" ||
		json.Unmarshal(d["mode"], &mode) != nil || json.Unmarshal(d["provider"], &provider) != nil {
		return "", false
	}
	switch mode {
	case "one-shot":
	case "continuable":
		if _, has := d["label"]; !has {
			return "", false // a continuable descriptor must be labelled
		}
	default:
		return "", false
	}
	for k := range d {
		if !descriptorKey(mode, k) {
			return "", false
		}
	}
	if raw, has := d["label"]; has {
		if json.Unmarshal(raw, &label) != nil || string(raw) == "null" {
			return "", false
		}
	}
	if raw, has := d["toolFilter"]; has && !validToolFilter(raw) {
		return "", false
	}
	return label, true
}

// validToolFilter: an object with string-array allow and/or deny, at least
// one of them.
func validToolFilter(raw json.RawMessage) bool {
	var f map[string]json.RawMessage
	if json.Unmarshal(raw, &f) != nil || len(f) == 0 {
		return false
	}
	for k, v := range f {
		var list []string
		if (k != "allow" && k != "deny") || json.Unmarshal(v, &list) != nil || string(v) == "null" {
			return false
		}
	}
	return true
}
