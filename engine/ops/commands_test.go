package ops

import (
	"os/exec"
	"testing"
)

func TestCapture(t *testing.T) {
	for _, tc := range []struct {
		name, command  string
		stdout, stderr string
		exit           int
		json           bool
	}{
		{"json", `echo '{"items": [1, 2]}'; echo warn >&2`, `{"items": [1, 2]}`, "warn", 0, true},
		{"text", `printf 'a\nb\n\n'`, "a\nb", "", 0, false},
		{"failure", `echo no >&2; exit 3`, "", "no", 3, false},
		{"broken json", `echo '{"a":'`, `{"a":`, "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, text, err := capture(exec.Command("sh", "-c", tc.command))
			if (err != nil) != (tc.exit != 0) {
				t.Fatalf("err = %v, want exit %d", err, tc.exit)
			}
			if res.Stdout != tc.stdout || res.Stderr != tc.stderr || res.ExitCode != tc.exit {
				t.Errorf("result = %+v, want stdout %q stderr %q exit %d", res, tc.stdout, tc.stderr, tc.exit)
			}
			if (res.JSON != nil) != tc.json {
				t.Errorf("json = %#v, want parsed: %v", res.JSON, tc.json)
			}
			if tc.json {
				m, _ := res.JSON.(map[string]any)
				if items, _ := m["items"].([]any); len(items) != 2 {
					t.Errorf("json.items = %#v, want 2 items", m["items"])
				}
			}
			if want := tc.stdout; tc.stderr != "" && text == "" || tc.stderr == "" && text != want {
				t.Errorf("combined output = %q", text)
			}
		})
	}
	res, _, err := capture(exec.Command("/nonexistent/binary"))
	if err == nil || res.ExitCode != -1 {
		t.Errorf("a command that did not start: exit %d, err %v; want -1 and an error", res.ExitCode, err)
	}
}
