package cluster

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// LoadRESTConfig reads the kubeconfig at path into a client config whose
// certificate authority, certificate and key are the files' contents, not
// their paths.
//
// client-go keeps one transport per TLS configuration for the life of
// the process, keyed by the files' paths when a kubeconfig names files,
// and re-reads a CA file only every 5 minutes. A cluster removed and
// booted again under the same name (the browser view's Reset, a test
// that reuses a name) has new authorities at the same paths: a client
// keyed by path would keep the old CA and fail every request with
// "certificate signed by unknown authority". Keyed by content, each
// cluster gets its own transport.
func LoadRESTConfig(path string) (*rest.Config, error) {
	kc, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", path, err)
	}
	if err := clientcmdapi.FlattenConfig(kc); err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", path, err)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// SpeakProtobuf makes cfg's typed clients send and read protobuf, as the
// controller-manager and scheduler do: a client of kubelab's that watches
// many objects (every node of a boot, every pod of a bench) in JSON
// decodes each event at several times the cost, and makes the apiserver
// encode each one a second time, for it alone.
func SpeakProtobuf(cfg *rest.Config) {
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
}
