package schema

import (
	"encoding/json"
	"testing"
)

func TestEveryKindIsAJSONSchema(t *testing.T) {
	for _, k := range Kinds() {
		b, err := For(k)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Schema string `json:"$schema"`
			ID     string `json:"$id"`
		}
		if err := json.Unmarshal(b, &s); err != nil || s.Schema == "" || s.ID == "" {
			t.Errorf("%s: not a JSON Schema with $schema and $id (%v): %+v", k, err, s)
		}
	}
	if _, err := For("pod"); err == nil {
		t.Error("For(pod) did not fail")
	}
}
