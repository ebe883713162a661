package demo

import "testing"

// TestKeyFollowsContent: Ensure's file name comes from what the generator
// produces. The same output gives the same key every time; one value of one
// row changed, or a schema or pragma changed, gives another, with no
// version to bump by hand.
func TestKeyFollowsContent(t *testing.T) {
	gen := func() *demoData {
		d, err := demoGenerate()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	base := demoKey(gen())
	if again := demoKey(gen()); again != base {
		t.Fatalf("two generations give keys %s and %s", base, again)
	}
	d := gen()
	d.orders[len(d.orders)-1].totalCents++
	if k := demoKey(d); k == base {
		t.Errorf("a changed order total kept the key %s", k)
	}
	d = gen()
	d.regions[0] += "x"
	if k := demoKey(d); k == base {
		t.Errorf("a changed region name kept the key %s", k)
	}
	d = gen()
	d.customers = d.customers[:len(d.customers)-1]
	if k := demoKey(d); k == base {
		t.Errorf("a missing customer kept the key %s", k)
	}
}

// BenchmarkKey is what Ensure pays, on every start, to name the file:
// generating the data and hashing it.
func BenchmarkKey(b *testing.B) {
	for b.Loop() {
		if _, err := Key(); err != nil {
			b.Fatal(err)
		}
	}
}
