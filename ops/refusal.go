package ops

import (
	"errors"
	"fmt"
	"regexp"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ExpectRefusal checks the outcome of a write that the apiserver should
// refuse (expectError on apply, create, patch and delete): it passes when
// err is a refusal whose message matches re. The message matched is the
// apiserver's own (the Status message), not the operation's wrapping of
// it. An error that is not the apiserver's answer (no connection, an
// unknown kind) is no refusal: the operation fails with it.
func ExpectRefusal(what, out string, err error, re *regexp.Regexp) (string, error) {
	if err == nil {
		return out, fmt.Errorf("%s succeeded, expected the apiserver to refuse it with a message matching /%s/", what, re)
	}
	msg, answered := RefusalMessage(err)
	if !answered {
		return out, fmt.Errorf("%s failed without an answer from the apiserver (expected a refusal matching /%s/): %w", what, re, err)
	}
	if !re.MatchString(msg) {
		return out, fmt.Errorf("%s was refused, but the message does not match /%s/: %w", what, re, err)
	}
	if out != "" {
		out += "\n"
	}
	return out + "refused as expected: " + msg, nil
}

// RefusalMessage is the apiserver's message in err (its Status), and
// whether err carries one.
func RefusalMessage(err error) (msg string, answered bool) {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message, true
	}
	return "", false
}
