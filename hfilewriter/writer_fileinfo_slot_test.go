package hfilewriter

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteFileInfoSlot checks the direct puts' slots (writeFileInfoMap.slot): a put of the key at its
// place in the last message, with a value of its length, gets that value's bytes in the message, also
// when the key is an equal string at another address (a key that is not one of putFileInfo's
// constants); another key, even of the same length, or another length is missed, and so is a put past
// the last slot.
func TestWriteFileInfoSlot(t *testing.T) {
	var m writeFileInfoMap
	m.reset()
	m.putString("aa", "xyz")
	m.putInt32("bb", 7)
	var c fileInfoOrder
	want := m.appendProtoOrder(nil, &c)
	if len(c.vals) != 2 {
		t.Fatalf("%d slots remembered, want 2", len(c.vals))
	}

	// The same keys, one of them at another address, the same lengths: both taken, in place.
	if !m.resetDirect(&c) {
		t.Fatal("resetDirect refused a remembered message")
	}
	other := strings.Clone("aa")
	m.putString(other, "uvw")
	m.putInt32("bb", 9)
	if !m.directDone() {
		t.Fatal("direct puts of the same keys and lengths were missed")
	}
	got := m.appendProtoOrder(nil, &c)
	var m2 writeFileInfoMap
	m2.reset()
	m2.putString("aa", "uvw")
	m2.putInt32("bb", 9)
	if exp := m2.appendProto(nil); !bytes.Equal(got, exp) {
		t.Fatalf("direct message %q, want %q", got, exp)
	}
	if bytes.Equal(got, want) {
		t.Fatal("the direct puts did not change the message")
	}

	for _, tc := range []struct {
		name string
		put  func(m *writeFileInfoMap)
	}{
		{"another key of the same length", func(m *writeFileInfoMap) { m.putString("ab", "xyz"); m.putInt32("bb", 1) }},
		{"another length", func(m *writeFileInfoMap) { m.putString("aa", "xy"); m.putInt32("bb", 1) }},
		{"a put past the last slot", func(m *writeFileInfoMap) {
			m.putString("aa", "xyz")
			m.putInt32("bb", 1)
			m.putBool("cc", true)
		}},
	} {
		if !m.resetDirect(&c) {
			t.Fatalf("%s: resetDirect refused", tc.name)
		}
		tc.put(&m)
		if m.directDone() {
			t.Errorf("%s: taken as a direct put", tc.name)
		}
	}
}
