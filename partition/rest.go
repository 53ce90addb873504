package partition

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/hfload/hfload/internal/kv"
)

// DefaultRESTTimeout bounds a whole regions request when FetchRESTSplits is given a nil client.
const DefaultRESTTimeout = 30 * time.Second

// maxRESTBody caps the regions response read into memory. A region's JSON entry is a few hundred
// bytes, so this allows a table of well over 100,000 regions.
const maxRESTBody = 64 << 20

// RESTRegion is one region as HBase's REST server (Stargate) reports it in GET /<table>/regions.
//
// The response shape, verified against the HBase source (module hbase-rest):
//   - org/apache/hadoop/hbase/rest/RegionsResource.java: GET on /{table}/regions builds a
//     TableInfoModel from RegionLocator.getAllRegionLocations(); an unknown table is 404 "Not found",
//     an IOException 503 "Unavailable". The {table} path parameter (RootResource.java, @Path("{table}"))
//     goes through TableName.valueOf, so "ns:table" names a table in a namespace.
//   - model/TableInfoModel.java: @XmlAttribute name (the table) and @XmlElement(name = "Region") the
//     list of regions, so the JSON array is "Region" (capital R).
//   - model/TableRegionModel.java: @XmlAttribute name, id (long), startKey, endKey (byte[]), location.
//   - provider/JacksonProvider.java: JSON is written by JacksonJaxbJsonProvider, which follows the JAXB
//     names and writes byte[] as standard base64 (an empty key is "").
//   - hbase-client .../client/HRegionLocator.java: getAllRegionLocations lists every replica of each
//     region (same start and end key), and its meta visitor (MetaTableAccessor.DefaultVisitorBase)
//     skips offline and split-parent regions, so a settled table's regions tile the key space.
//
// All paths above are under hbase-rest/src/main/java/org/apache/hadoop/hbase/rest/ unless given.
// TestTableInfoModel.java's AS_JSON is an example:
//
//	{"name":"testtable","Region":[{"endKey":"enp5eng=","id":8731042424,"location":"testhost:9876",
//	 "name":"testtable,abracadbra,8731042424.ad9860f031282c46ed431d7af8f94aca.","startKey":"YWJyYWNhZGJyYQ=="}]}
type RESTRegion struct {
	Name     string `json:"name"`
	StartKey []byte `json:"startKey"` // base64 in the JSON; empty = table start
	EndKey   []byte `json:"endKey"`   // base64 in the JSON; empty = table end
	Location string `json:"location"`
}

// restTableInfo is TableInfoModel's JSON form.
type restTableInfo struct {
	Name    string       `json:"name"`
	Regions []RESTRegion `json:"Region"`
}

// RESTStatusError is the error for a regions request answered with a status other than 200 OK.
type RESTStatusError struct {
	URL        string
	StatusCode int
	Body       string // the start of the response body, trimmed
}

func (e *RESTStatusError) Error() string {
	msg := fmt.Sprintf("GET %s: HTTP %d %s", e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	switch e.StatusCode {
	case http.StatusNotFound:
		msg += " (table not found)"
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += " (the REST server requires authentication or denies access; hfload sends none)"
	case http.StatusServiceUnavailable:
		msg += " (the REST server could not reach HBase)"
	}
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// RESTRegionsURL returns the URL of table's regions resource on the REST server at baseURL
// (http:// or https://, optionally with a path prefix such as a gateway's): <baseURL>/<table>/regions.
// The table name is path-escaped; "ns:table" stays as is (':' needs no escaping in a path segment).
func RESTRegionsURL(baseURL, table string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return "", fmt.Errorf("REST server URL %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("REST server URL %q: want http:// or https://", baseURL)
	}
	if u.Host == "" {
		return "", fmt.Errorf("REST server URL %q: no host", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("REST server URL %q: give scheme, host, port and path only (no query, fragment or user)", baseURL)
	}
	if table == "" {
		return "", errors.New("REST regions: empty table name")
	}
	base := strings.TrimRight(u.String(), "/")
	return base + "/" + url.PathEscape(table) + "/regions", nil
}

// FetchRESTSplits reads the current regions of table from the HBase REST server at baseURL
// (e.g. http://rest-host:8080) and returns their split points: the start keys of all regions but the
// first. The regions must tile the key space — the first starts at the empty key, each starts where
// the previous one ends, the last ends at the empty key — or the error names the gap or overlap.
// Region replicas (the same start and end key listed again) are counted once.
//
// A nil client uses one with DefaultRESTTimeout; ctx cancels the request.
func FetchRESTSplits(ctx context.Context, client *http.Client, baseURL, table string) (Splits, error) {
	u, err := RESTRegionsURL(baseURL, table)
	if err != nil {
		return nil, err
	}
	if client == nil {
		client = &http.Client{Timeout: DefaultRESTTimeout}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("REST regions request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("REST regions of %s: %w", table, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRESTBody+1))
	if err != nil {
		return nil, fmt.Errorf("REST regions of %s: reading the response: %w", table, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &RESTStatusError{URL: u, StatusCode: resp.StatusCode, Body: bodySnippet(body)}
	}
	if len(body) > maxRESTBody {
		return nil, fmt.Errorf("REST regions of %s: response larger than %d bytes", table, maxRESTBody)
	}
	var info restTableInfo
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("REST regions of %s: GET %s: response (Content-Type %q) is not the TableInfo JSON: %w: %s",
			table, u, resp.Header.Get("Content-Type"), err, bodySnippet(body))
	}
	s, err := SplitsFromRegions(info.Regions)
	if err != nil {
		return nil, fmt.Errorf("REST regions of %s: %w (if a region split or merge was in progress, retry)", table, err)
	}
	return s, nil
}

// SplitsFromRegions returns the split points of a table given its regions in any order: the start keys
// of all but the first region. The regions must tile the key space; duplicates of a region (same start
// and end key, as region replicas are listed) count once.
func SplitsFromRegions(regions []RESTRegion) (Splits, error) {
	if len(regions) == 0 {
		return nil, errors.New("no regions listed")
	}
	rs := append([]RESTRegion(nil), regions...)
	sort.SliceStable(rs, func(i, j int) bool {
		if c := bytes.Compare(rs[i].StartKey, rs[j].StartKey); c != 0 {
			return c < 0
		}
		return compareEnd(rs[i].EndKey, rs[j].EndKey) < 0
	})
	uniq := rs[:1]
	for _, r := range rs[1:] {
		p := uniq[len(uniq)-1]
		if bytes.Equal(p.StartKey, r.StartKey) && bytes.Equal(p.EndKey, r.EndKey) {
			continue // a replica of the same region
		}
		uniq = append(uniq, r)
	}
	if len(uniq[0].StartKey) != 0 {
		return nil, fmt.Errorf("gap at the table start: the first region %s starts at %q, not the empty key",
			regionLabel(uniq[0]), kv.ToStringBinary(uniq[0].StartKey))
	}
	for i := 1; i < len(uniq); i++ {
		prev, r := uniq[i-1], uniq[i]
		if len(prev.EndKey) == 0 {
			return nil, fmt.Errorf("overlap: region %s ends at the table end but region %s starts at %q",
				regionLabel(prev), regionLabel(r), kv.ToStringBinary(r.StartKey))
		}
		switch c := bytes.Compare(prev.EndKey, r.StartKey); {
		case c < 0:
			return nil, fmt.Errorf("gap: region %s ends at %q but the next region %s starts at %q",
				regionLabel(prev), kv.ToStringBinary(prev.EndKey), regionLabel(r), kv.ToStringBinary(r.StartKey))
		case c > 0:
			return nil, fmt.Errorf("overlap: region %s ends at %q, after region %s starts at %q",
				regionLabel(prev), kv.ToStringBinary(prev.EndKey), regionLabel(r), kv.ToStringBinary(r.StartKey))
		}
	}
	if last := uniq[len(uniq)-1]; len(last.EndKey) != 0 {
		return nil, fmt.Errorf("gap at the table end: the last region %s ends at %q, not the empty key",
			regionLabel(last), kv.ToStringBinary(last.EndKey))
	}
	s := make(Splits, 0, len(uniq)-1)
	for _, r := range uniq[1:] {
		s = append(s, r.StartKey)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// compareEnd compares end keys with the empty key (table end) sorting last.
func compareEnd(a, b []byte) int {
	switch {
	case len(a) == 0 && len(b) == 0:
		return 0
	case len(a) == 0:
		return 1
	case len(b) == 0:
		return -1
	}
	return bytes.Compare(a, b)
}

// regionLabel names a region in errors: its REST name, or its key range when the name is missing.
func regionLabel(r RESTRegion) string {
	if r.Name != "" {
		return fmt.Sprintf("%q", r.Name)
	}
	return fmt.Sprintf("[%q, %q)", kv.ToStringBinary(r.StartKey), kv.ToStringBinary(r.EndKey))
}

// bodySnippet returns the start of a response body for an error message.
func bodySnippet(b []byte) string {
	const max = 200
	t := strings.TrimSpace(string(b))
	if len(t) > max {
		t = t[:max] + "..."
	}
	return strings.ToValidUTF8(t, "?")
}
