package app_test

import (
	"slices"
	"testing"

	"kubelab.dev/kubelab/cmd/kubelab/app"
)

func TestMetricsLines(t *testing.T) {
	const text = `# HELP etcd_server_is_leader Whether or not this member is a leader.
# TYPE etcd_server_is_leader gauge
etcd_server_is_leader 1
# HELP etcd_disk_wal_fsync_duration_seconds The latency distributions of fsync called by WAL.
# TYPE etcd_disk_wal_fsync_duration_seconds histogram
etcd_disk_wal_fsync_duration_seconds_bucket{le="0.001"} 3
etcd_disk_wal_fsync_duration_seconds_sum 0.002
etcd_disk_wal_fsync_duration_seconds_count 4
`
	for filter, want := range map[string][]string{
		"": {
			"etcd_server_is_leader (gauge) Whether or not this member is a leader.",
			"etcd_disk_wal_fsync_duration_seconds (histogram) The latency distributions of fsync called by WAL.",
		},
		"fsync": {
			"# HELP etcd_disk_wal_fsync_duration_seconds The latency distributions of fsync called by WAL.",
			`etcd_disk_wal_fsync_duration_seconds_bucket{le="0.001"} 3`,
			"etcd_disk_wal_fsync_duration_seconds_sum 0.002",
			"etcd_disk_wal_fsync_duration_seconds_count 4",
		},
		"nope": nil,
	} {
		if got := app.MetricsLines(text, filter); !slices.Equal(got, want) {
			t.Errorf("filter %q:\n%q\nwant\n%q", filter, got, want)
		}
	}
}
