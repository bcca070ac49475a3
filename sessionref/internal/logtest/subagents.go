package logtest

// The subagent events of SPEC §1.7: a parent's catalog of its children and
// a child's own descriptor.
const (
	typeCatalog    = "subagent/catalog"
	typeDescriptor = "subagent/descriptor"
)

// CatalogEvent is a parent's catalog record listing child under label.
func CatalogEvent(seq int64, child, label string) string {
	return EventLine(typeCatalog, seq, map[string]any{"version": 0, "childId": child, "childCreatedAt": 0, "mode": "one-shot", "label": label}, "")
}

// DescriptorEvent is a subagent descriptor; a nil label leaves it out.
func DescriptorEvent(seq int64, version int, label *string) string {
	d := map[string]any{"version": version, "mode": "one-shot", "provider": "p"}
	if label != nil {
		d["label"] = *label
	}
	return EventLine(typeDescriptor, seq, d, "")
}
