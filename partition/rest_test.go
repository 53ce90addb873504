package partition

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// restRegionJSON renders one region the way HBase's JacksonJaxbJsonProvider writes a TableRegionModel
// (attribute names, byte[] as standard base64, id as a JSON number).
func restRegionJSON(table string, id int64, start, end, location string) string {
	name := fmt.Sprintf("%s,%s,%d.0123456789abcdef0123456789abcdef.", table, start, id)
	return fmt.Sprintf(`{"endKey":%s,"id":%d,"location":%s,"name":%s,"startKey":%s}`,
		jsonString(base64.StdEncoding.EncodeToString([]byte(end))), id, jsonString(location), jsonString(name),
		jsonString(base64.StdEncoding.EncodeToString([]byte(start))))
}

// jsonString is s as a JSON string; invalid UTF-8 becomes U+FFFD, as Java's Bytes.toString does.
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// restTableJSON renders a TableInfoModel with regions given as consecutive [start, end) boundaries.
func restTableJSON(table string, bounds ...string) string {
	var regions []string
	for i := 0; i+1 < len(bounds); i++ {
		regions = append(regions, restRegionJSON(table, 1700000000000+int64(i), bounds[i], bounds[i+1],
			fmt.Sprintf("rs%d.example.com:16020", i%3)))
	}
	return fmt.Sprintf(`{"name":%s,"Region":[%s]}`, jsonString(table), strings.Join(regions, ","))
}

// restServer serves body with status for GET <prefix>/<table>/regions and records the request.
type restServer struct {
	*httptest.Server
	path, rawURI, accept string
}

func newRESTServer(t *testing.T, status int, body string) *restServer {
	t.Helper()
	rs := &restServer{}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.path, rs.rawURI, rs.accept = r.URL.Path, r.RequestURI, r.Header.Get("Accept")
		if status == http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
		} else {
			w.Header().Set("Content-Type", "text/plain")
		}
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(rs.Close)
	return rs
}

func TestFetchRESTSplitsNamespacedBinaryKeys(t *testing.T) {
	bounds := []string{"", "\x00\x01", "\x00\x01\xff", "k|\xfe", "m", ""}
	srv := newRESTServer(t, http.StatusOK, restTableJSON("ns1:orders", bounds...))
	got, err := FetchRESTSplits(context.Background(), srv.Client(), srv.URL+"/", "ns1:orders")
	if err != nil {
		t.Fatal(err)
	}
	if srv.path != "/ns1:orders/regions" || srv.rawURI != "/ns1:orders/regions" {
		t.Fatalf("requested path %q (raw %q), want /ns1:orders/regions", srv.path, srv.rawURI)
	}
	if srv.accept != "application/json" {
		t.Fatalf("Accept %q", srv.accept)
	}
	want := Splits{[]byte("\x00\x01"), []byte("\x00\x01\xff"), []byte("k|\xfe"), []byte("m")}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("got %q, want %q", got, want)
	}

	// The same split points written as a splits file route every key to the same region.
	fromFile, err := ParseSplits(strings.NewReader(`\x00\x01` + "\n" + `\x00\x01\xFF` + "\n" + `k|\xFE` + "\nm\n"))
	if err != nil {
		t.Fatal(err)
	}
	probes := []string{"", "\x00", "\x00\x01", "\x00\x01\x00", "\x00\x01\xff", "\x00\x02", "a", "k|", "k|\xfe",
		"k|\xff", "l", "m", "m\x00", "\xff\xff"}
	for _, p := range probes {
		if a, b := got.Region([]byte(p)), fromFile.Region([]byte(p)); a != b {
			t.Fatalf("key %q: region %d from REST, %d from the splits file", p, a, b)
		}
	}
	if got.Region([]byte("k|\xff")) != 3 || got.Region([]byte("\x00\x01\x00")) != 1 {
		t.Fatalf("unexpected routing: %d %d", got.Region([]byte("k|\xff")), got.Region([]byte("\x00\x01\x00")))
	}
}

func TestFetchRESTSplitsBasePathAndEscaping(t *testing.T) {
	srv := newRESTServer(t, http.StatusOK, restTableJSON("t", "", "b", ""))
	got, err := FetchRESTSplits(context.Background(), srv.Client(), srv.URL+"/gateway/hbase", "t")
	if err != nil {
		t.Fatal(err)
	}
	if srv.path != "/gateway/hbase/t/regions" || len(got) != 1 || string(got[0]) != "b" {
		t.Fatalf("path %q splits %q", srv.path, got)
	}
	u, err := RESTRegionsURL("https://rest:8443", "a b/c")
	if err != nil || u != "https://rest:8443/a%20b%2Fc/regions" {
		t.Fatalf("%q %v", u, err)
	}
	for _, bad := range []string{"rest-host:8080", "ftp://h/", "http://", "http://h/?x=1", "http://u:p@h/"} {
		if _, err := RESTRegionsURL(bad, "t"); err == nil {
			t.Fatalf("%q: no error", bad)
		}
	}
}

func TestFetchRESTSplitsOneRegionReplicasAndOrder(t *testing.T) {
	srv := newRESTServer(t, http.StatusOK, restTableJSON("t", "", ""))
	got, err := FetchRESTSplits(context.Background(), srv.Client(), srv.URL, "t")
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || len(got) != 0 {
		t.Fatalf("one region: got %q, want no split points", got)
	}
	// Regions listed out of order and with replicas (same keys twice) give the same splits.
	body := fmt.Sprintf(`{"name":"t","Region":[%s,%s,%s,%s]}`,
		restRegionJSON("t", 3, "m", "", "h3:1"), restRegionJSON("t", 1, "", "c", "h1:1"),
		restRegionJSON("t", 2, "c", "m", "h2:1"), restRegionJSON("t", 2, "c", "m", "h4:1"))
	srv2 := newRESTServer(t, http.StatusOK, body)
	got, err = FetchRESTSplits(context.Background(), srv2.Client(), srv2.URL, "t")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%q", got) != `["c" "m"]` {
		t.Fatalf("got %q", got)
	}
}

func TestFetchRESTSplitsHTTPErrors(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{http.StatusNotFound, "Not found\r\n", "table not found"},
		{http.StatusInternalServerError, "boom", "HTTP 500"},
		{http.StatusServiceUnavailable, "Unavailable\r\n", "could not reach HBase"},
		{http.StatusUnauthorized, "", "authentication"},
	} {
		srv := newRESTServer(t, tc.status, tc.body)
		_, err := FetchRESTSplits(context.Background(), srv.Client(), srv.URL, "missing")
		var se *RESTStatusError
		if !errors.As(err, &se) || se.StatusCode != tc.status {
			t.Fatalf("status %d: err %v, want a RESTStatusError", tc.status, err)
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "/missing/regions") {
			t.Fatalf("status %d: error %q lacks %q or the URL", tc.status, err, tc.want)
		}
	}
}

func TestFetchRESTSplitsMalformed(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`<html>proxy error</html>`, "not the TableInfo JSON"},
		{`{"name":"t","Region":[{"startKey":"%%%","endKey":""}]}`, "not the TableInfo JSON"},
		{`{"name":"t","Region":"x"}`, "not the TableInfo JSON"},
		{`{"name":"t","Region":[]}`, "no regions"},
		{`{"name":"t"}`, "no regions"},
	} {
		srv := newRESTServer(t, http.StatusOK, tc.body)
		_, err := FetchRESTSplits(context.Background(), srv.Client(), srv.URL, "t")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("body %s: error %v, want %q", tc.body, err, tc.want)
		}
	}
}

func TestFetchRESTSplitsTiling(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parts [][2]string
		want  string
	}{
		{"gap", [][2]string{{"", "b"}, {"c", ""}}, `gap: region "t,,1.0123456789abcdef0123456789abcdef." ends at "b" but the next region`},
		{"binary gap", [][2]string{{"", "\x00\x01"}, {"\x00\x02", ""}}, `ends at "\\x00\\x01" but the next region "t,\x00\x02`},
		{"overlap", [][2]string{{"", "d"}, {"c", ""}}, `overlap: region "t,,1.0123456789abcdef0123456789abcdef." ends at "d", after region`},
		{"start", [][2]string{{"a", ""}}, "gap at the table start"},
		{"end", [][2]string{{"", "z"}}, "gap at the table end"},
		{"two ends", [][2]string{{"", ""}, {"m", ""}}, "ends at the table end but region"},
	} {
		var regions []string
		for i, p := range tc.parts {
			regions = append(regions, restRegionJSON("t", int64(i+1), p[0], p[1], "h:1"))
		}
		srv := newRESTServer(t, http.StatusOK, `{"name":"t","Region":[`+strings.Join(regions, ",")+`]}`)
		_, err := FetchRESTSplits(context.Background(), srv.Client(), srv.URL, "t")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "retry") {
			t.Fatalf("%s: error %v, want %q and a retry hint", tc.name, err, tc.want)
		}
	}
}

func TestFetchRESTSplitsContextTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := FetchRESTSplits(ctx, srv.Client(), srv.URL, "t")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("returned after %v", d)
	}
}
