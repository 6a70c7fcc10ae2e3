// Package probe holds the health checks both backends run while a cluster
// boots: an HTTPS GET that must answer 200, and an etcd member that must
// report a Raft leader.
package probe

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// HTTPOK GETs url and fails unless it answers 200.
func HTTPOK(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// EtcdLeader asks the member at ep for its status and fails unless it
// knows a leader. dial, when set, connects to the endpoint's host:port.
func EtcdLeader(ctx context.Context, ep string, tlsCfg *tls.Config, dial func(context.Context, string) (net.Conn, error)) error {
	cfg := clientv3.Config{Endpoints: []string{ep}, TLS: tlsCfg, DialTimeout: time.Second, Context: ctx, Logger: zap.NewNop()}
	if dial != nil {
		cfg.DialOptions = []grpc.DialOption{grpc.WithContextDialer(dial)}
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return err
	}
	defer cli.Close()
	st, err := cli.Status(ctx, ep)
	if err != nil {
		return err
	}
	if st.Leader == 0 {
		return errors.New("no leader yet")
	}
	return nil
}
