package suggest

import "testing"

func TestClosest(t *testing.T) {
	keys := []string{"HBASE_ROW_KEY", "HBASE_TS_KEY", "columns", "max-rejects"}
	for in, want := range map[string]string{
		"HBASE_ROWKEY": "HBASE_ROW_KEY", "HBASE_TS_KY": "HBASE_TS_KEY", "colums": "columns", "clomuns": "columns",
		"max-rejcts": "max-rejects", "table": "", "x": "",
	} {
		if got := Closest(in, keys); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
}
