package draft_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"sqlbot/roconn/draft"
)

// heldOutSchema is a schema written apart from the generator the detector
// was tuned on (gen_test.go): private values under names that say nothing,
// in shapes that generator does not make, beside harmless columns whose
// values come close to them. It returns the schema and, for each
// "table.column", whether it is private.
func heldOutSchema() (*draft.Schema, map[string]bool) {
	r := rand.New(rand.NewPCG(11, 2026))
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	const n = 60
	gen := func(f func(i int) any) []any {
		var out []any
		seen := map[any]bool{}
		for i := range n {
			v := f(i)
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
		return out
	}
	column := func(name, typ string, vals []any) draft.Column {
		return draft.Column{Name: name, Type: typ, NonNull: n, Distinct: len(vals), Samples: vals}
	}

	jaFamily := []string{"Watanabe", "Sato", "Suzuki", "Takahashi", "Tanaka", "Ito", "Yamamoto", "Nakamura", "Kobayashi", "Kato", "Yoshida", "Yamada", "Sasaki", "Matsumoto", "Inoue", "Kimura", "Hayashi", "Shimizu", "Mori", "Ikeda"}
	jaGiven := []string{"Hiroshi", "Takeshi", "Yuki", "Haruto", "Sota", "Yuto", "Akira", "Kenji", "Daiki", "Sakura", "Yui", "Aoi", "Hina", "Mei", "Emi", "Naoko", "Keiko", "Yoko", "Riko", "Shota"}
	viFamily := []string{"Nguyen", "Tran", "Le", "Pham", "Hoang", "Huynh", "Phan", "Vu", "Vo", "Dang", "Bui", "Do", "Ho", "Ngo", "Duong", "Ly"}
	viMiddle := []string{"Van", "Thi", "Duc", "Minh", "Ngoc", "Quang", "Thanh", "Huu"}
	viGiven := []string{"An", "Binh", "Cuong", "Dung", "Hai", "Hanh", "Hung", "Huong", "Khanh", "Lan", "Linh", "Long", "Mai", "Nam", "Phuong", "Quan", "Thao", "Trang", "Tuan", "Vy"}
	koFamily := []string{"Kim", "Lee", "Park", "Choi", "Jung", "Kang", "Cho", "Yoon", "Jang", "Lim", "Han", "Oh", "Seo", "Shin", "Kwon", "Hwang"}
	koGiven := []string{"Min-jun", "Seo-yeon", "Ji-ho", "Ha-eun", "Do-yun", "Ji-woo", "Seo-jun", "Soo-ah", "Ye-jin", "Hyun-woo", "Eun-ji", "Jae-won", "Su-bin", "Ji-hoon", "Yu-na", "Sung-min"}
	hex := func(k int) string {
		const digits = "0123456789abcdef"
		var b strings.Builder
		for range k {
			b.WriteByte(digits[r.IntN(16)])
		}
		return b.String()
	}
	uuid := func() string {
		h := hex(32)
		return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-" + string("89ab"[r.IntN(4)]) + h[17:20] + "-" + h[20:]
	}
	sixDecimals := func(lo, hi float64) any {
		f := lo + r.Float64()*(hi-lo)
		var v float64
		fmt.Sscanf(fmt.Sprintf("%.6f", f), "%g", &v)
		return v
	}
	twoDecimals := func(lo, hi float64) any {
		var v float64
		fmt.Sscanf(fmt.Sprintf("%.2f", lo+r.Float64()*(hi-lo)), "%g", &v)
		return v
	}

	products := []string{"Osaka Ramen Kit", "Seoul Chili Flakes", "Hanoi Coffee Filter", "Kyoto Matcha Tin", "Trail Runner 3",
		"Summit Pack", "Long Sleeve Tee", "Park Bench Cushion", "Jade Teapot", "Lotus Candle", "Bamboo Cutting Board",
		"Rice Cooker Mini", "Sakura Incense", "Mochi Mix", "Pho Spice Set", "Kimchi Crock", "Ginger Tea", "Lan Cable Cat6",
		"Mai Tai Syrup", "Sumi Ink Stick", "Nori Sheets", "Miso Paste", "Tofu Press", "Wok Lid", "Hana Vase"}
	places := []draft.Object{{
		Name: "bookings", Rows: n, Scanned: n,
		Columns: []draft.Column{
			column("id", "INTEGER", gen(func(i int) any { return int64(i + 1) })),
			column("party", "TEXT", gen(func(int) any { return pick(jaFamily) + " " + pick(jaGiven) })),
			column("booked_as", "TEXT", gen(func(int) any { return pick(viFamily) + " " + pick(viMiddle) + " " + pick(viGiven) })),
			column("display", "TEXT", gen(func(int) any { return pick(koFamily) + " " + pick(koGiven) })),
			column("m1", "REAL", gen(func(int) any { return sixDecimals(50.0, 56.0) })),
			column("m2", "REAL", gen(func(int) any { return sixDecimals(-3.0, 2.0) })),
			column("ref", "TEXT", gen(func(int) any { return hex(64) })),
			column("nights", "INTEGER", gen(func(int) any { return int64(1 + r.IntN(9)) })),
		},
	}, {
		Name: "sites", Rows: n, Scanned: n,
		Columns: []draft.Column{
			column("code", "TEXT", gen(func(i int) any { return fmt.Sprintf("GH-%03d", i) })),
			column("p", "REAL", gen(func(int) any { return sixDecimals(4.8, 11.0) })),
			column("q", "REAL", gen(func(int) any { return sixDecimals(-3.2, 1.1) })),
		},
	}, {
		Name: "catalog_items", Rows: n, Scanned: n,
		Columns: []draft.Column{
			{Name: "id", Type: "TEXT", PrimaryKey: true, NonNull: n, Distinct: n, Samples: gen(func(int) any { return uuid() })},
			column("title", "TEXT", gen(func(i int) any { return products[i%len(products)] })),
			column("sku", "TEXT", gen(func(int) any {
				return fmt.Sprintf("SKU-%05d-%s", r.IntN(100000), pick([]string{"BL", "RD", "GR", "XL"}))
			})),
			column("colour", "TEXT", gen(func(int) any { return "#" + hex(6) })),
			column("version", "TEXT", gen(func(int) any { return hex(7 + r.IntN(6)) })),
			column("price", "REAL", gen(func(int) any { return twoDecimals(1, 200) })),
			column("rating", "REAL", gen(func(int) any { return twoDecimals(1, 5) })),
			column("weight", "REAL", gen(func(int) any { return sixDecimals(0.05, 3.0) })),
		},
	}, {
		Name: "fx", Rows: n, Scanned: n,
		Columns: []draft.Column{
			column("day", "TEXT", gen(func(i int) any { return fmt.Sprintf("2026-03-%02d", 1+i%28) })),
			column("rate", "REAL", gen(func(int) any { return sixDecimals(1.05, 1.12) })),
			column("change", "REAL", gen(func(int) any { return sixDecimals(-0.02, 0.02) })),
			column("share", "REAL", gen(func(int) any { return sixDecimals(0, 1) })),
		},
	}}
	truth := map[string]bool{}
	for _, o := range places {
		for _, c := range o.Columns {
			truth[o.Name+"."+c.Name] = false
		}
	}
	for _, c := range []string{"bookings.party", "bookings.booked_as", "bookings.display", "bookings.m1", "bookings.m2", "bookings.ref", "sites.p", "sites.q"} {
		truth[c] = true
	}
	return &draft.Schema{Source: "heldout.db", Objects: places}, truth
}

// TestHeldOutSchema scores the draft on heldOutSchema: surname-first names
// from Japan, Vietnam and Korea, coordinate pairs whose longitudes lie near
// zero, and a column of 64-hex tokens must be hidden; product names (some
// with Asian words), SKUs, colours, short commit hashes, UUID keys, prices,
// ratings and exchange rates must not.
func TestHeldOutSchema(t *testing.T) {
	s, truth := heldOutSchema()
	d := draft.Make(s)
	var missed, wrong []string
	tp, private, hidden := 0, 0, 0
	for _, e := range d.Entries {
		if e.LeftOut != "" {
			t.Errorf("%s is left out: %s", e.Name, e.LeftOut)
		}
		for _, c := range e.Columns {
			col := e.Name + "." + c.Column
			p, ok := truth[col]
			if !ok {
				t.Fatalf("unexpected column %s", col)
			}
			if c.Hidden {
				hidden++
			}
			switch {
			case p && c.Hidden:
				tp++
			case p:
				missed = append(missed, col)
			case c.Hidden:
				wrong = append(wrong, col+" ("+c.Reason+")")
			}
			if p {
				private++
			}
		}
	}
	slices.Sort(missed)
	slices.Sort(wrong)
	recall := float64(tp) / float64(private)
	precision := 1.0
	if hidden > 0 {
		precision = float64(tp) / float64(hidden)
	}
	t.Logf("held out: %d columns, %d private; recall %.3f (%d/%d), precision %.3f (%d/%d)", len(truth), private, recall, tp, private, precision, tp, hidden)
	if len(missed) > 0 {
		t.Errorf("private but readable: %v", missed)
	}
	if len(wrong) > 0 {
		t.Errorf("hidden but harmless: %v", wrong)
	}
}
