package observe

import (
	"slices"
	"testing"
)

// As kube-proxy v1.37 (iptables mode) wrote it on a docker-backend node.
const natTable = `*nat
:KUBE-SERVICES - [0:0]
-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
-A KUBE-SERVICES -d 10.96.41.7/32 -p tcp -m comment --comment "default/web cluster IP" -m tcp --dport 80 -j KUBE-SVC-LOLE4ISW44XBNF3G
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
-A KUBE-EXT-LOLE4ISW44XBNF3G -m comment --comment "masquerade traffic for default/web external destinations" -j KUBE-MARK-MASQ
-A KUBE-EXT-LOLE4ISW44XBNF3G -j KUBE-SVC-LOLE4ISW44XBNF3G
-A KUBE-NODEPORTS -p tcp -m comment --comment "default/web" -m tcp --dport 31447 -j KUBE-EXT-LOLE4ISW44XBNF3G
-A KUBE-SVC-LOLE4ISW44XBNF3G ! -s 10.240.0.0/12 -d 10.96.41.7/32 -p tcp -m comment --comment "default/web cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ
-A KUBE-SVC-LOLE4ISW44XBNF3G -m comment --comment "default/web -> 10.240.0.2:8080" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-2MIZAXYB7NNUDO2T
-A KUBE-SVC-LOLE4ISW44XBNF3G -m comment --comment "default/web -> 10.240.0.3:8080" -j KUBE-SEP-DFG6P3F5X2EZW4JJ
-A KUBE-SEP-2MIZAXYB7NNUDO2T -s 10.240.0.2/32 -m comment --comment "default/web" -j KUBE-MARK-MASQ
-A KUBE-SEP-2MIZAXYB7NNUDO2T -p tcp -m comment --comment "default/web" -m tcp -j DNAT --to-destination 10.240.0.2:8080
-A KUBE-SEP-DFG6P3F5X2EZW4JJ -s 10.240.0.3/32 -m comment --comment "default/web" -j KUBE-MARK-MASQ
-A KUBE-SEP-DFG6P3F5X2EZW4JJ -p tcp -m comment --comment "default/web" -m tcp -j DNAT --to-destination 10.240.0.3:8080
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 172.20.0.5:53" -j KUBE-SEP-4ZEIHRRYABMJZXNO
-A KUBE-SEP-4ZEIHRRYABMJZXNO -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 172.20.0.5:53
COMMIT
`

func TestParseIPTablesFollowsTheServiceChains(t *testing.T) {
	tb := ParseIPTables(natTable)
	web, ok := tb.Services["default/web"]
	if !ok {
		t.Fatalf("no default/web in %v", tb.Services)
	}
	if web.Chain != "KUBE-SVC-LOLE4ISW44XBNF3G" || web.ClusterIP != "10.96.41.7" || !web.NodePort {
		t.Errorf("web: %+v", web)
	}
	if !slices.Equal(web.Endpoints, []string{"10.240.0.2:8080", "10.240.0.3:8080"}) || len(web.SEPs) != 2 {
		t.Errorf("web endpoints %v, seps %v", web.Endpoints, web.SEPs)
	}
	dns := tb.Services["kube-system/kube-dns:dns"]
	if dns.NodePort || !slices.Equal(dns.Endpoints, []string{"172.20.0.5:53"}) {
		t.Errorf("dns: %+v", dns)
	}
	if len(tb.Chains["KUBE-SERVICES"]) != 3 {
		t.Errorf("KUBE-SERVICES has %d rules, want 3", len(tb.Chains["KUBE-SERVICES"]))
	}
}
