package server

import "testing"

func TestIncrementalChanges(t *testing.T) {
	tests := []struct {
		name    string
		enc     PositionEncoding
		text    string
		changes []contentChange
		want    string
	}{
		{"insert after emoji, utf-16", EncodingUTF16, "😀 @x\nline2",
			[]contentChange{{Range: &Range{Position{0, 5}, Position{0, 5}}, Text: "yz"}}, "😀 @xyz\nline2"},
		{"insert after emoji, utf-8", EncodingUTF8, "😀 @x\nline2",
			[]contentChange{{Range: &Range{Position{0, 7}, Position{0, 7}}, Text: "yz"}}, "😀 @xyz\nline2"},
		{"replace CJK across lines", EncodingUTF16, "文件一\n文件二",
			[]contentChange{{Range: &Range{Position{0, 2}, Position{1, 1}}, Text: "-"}}, "文件-件二"},
		{"full then incremental", EncodingUTF16, "old",
			[]contentChange{{Text: "new text"}, {Range: &Range{Position{0, 0}, Position{0, 3}}, Text: "NEW"}}, "NEW text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDocuments()
			d.open(document{URI: "u", Version: 1, Text: tt.text})
			doc, err := d.change("u", 2, tt.changes, tt.enc)
			if err != nil {
				t.Fatal(err)
			}
			if doc.Text != tt.want || doc.Version != 2 {
				t.Errorf("text %q v%d, want %q v2", doc.Text, doc.Version, tt.want)
			}
		})
	}
	d := newDocuments()
	if _, err := d.change("missing", 2, nil, EncodingUTF16); err == nil {
		t.Error("change to a closed document gave no error")
	}
	d.open(document{URI: "u", Version: 1, Text: "a"})
	if _, err := d.change("u", 2, []contentChange{{Range: &Range{Position{3, 0}, Position{3, 0}}, Text: "x"}}, EncodingUTF16); err == nil {
		t.Error("change past the last line gave no error")
	}
	if doc, _ := d.get("u"); doc.Text != "a" || doc.Version != 1 {
		t.Errorf("a failed change modified the document: %+v", doc)
	}
}
