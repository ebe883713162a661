package roconn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// A Policy says which tables and views the model may read, what their columns
// mean, and the house rules that define the business's terms. Load one with
// ParsePolicy; a nil *Policy given to Open means "every user table and view
// readable, schema tables hidden".
type Policy struct {
	Expose []Exposed // sorted by name
	Rules  []string  // house rules, in file order
	Limits PolicyLimits
}

// Exposed is one object the policy lets the model read.
type Exposed struct {
	Name    string
	About   string
	Columns map[string]string // column name → meaning; may be partial or empty
	Hide    []string          // columns of a table the model may not read, in file order
}

// PolicyLimits are the policy file's `limits:`; zero means unset. Open
// merges them with its Limits argument, whose non-zero fields win (cmd passes
// the settings from the environment there).
type PolicyLimits struct {
	Rows    int
	Timeout time.Duration
}

// policyFile is the YAML form of a Policy.
type policyFile struct {
	Expose map[string]*exposedFile `yaml:"expose"`
	Rules  []string                `yaml:"rules"`
	Limits struct {
		Rows    int    `yaml:"rows"`
		Timeout string `yaml:"timeout"`
	} `yaml:"limits"`
}

type exposedFile struct {
	About   string            `yaml:"about"`
	Columns map[string]string `yaml:"columns"`
	Hide    []string          `yaml:"hide"`
}

// ParsePolicy parses a policy file:
//
//	expose:
//	  orders:
//	    about: One row per order.
//	    columns: {status: "shipped, returned, pending or canceled"}
//	  customers:
//	    hide: [email, phone]
//	rules:
//	  - Sales means orders with status 'shipped'.
//	limits: {rows: 200, timeout: 5s}
//
// A table's hide lists columns the model may not read; they are enforced
// like the columns a view leaves out, and left out of what the model is
// told about the table.
//
// An unknown key, a second YAML document, an empty expose list, an object
// listed twice (names compare without regard to ASCII case), a column hidden
// twice or both described and hidden, a timeout that
// is not a positive Go duration such as "5s", or a negative row limit is an
// error. Whether the objects and columns exist is checked by Open. Expose
// comes back sorted by name.
func ParsePolicy(data []byte) (*Policy, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f policyFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("roconn: parse policy: the file is empty")
		}
		return nil, fmt.Errorf("roconn: parse policy: %w", err)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("roconn: parse policy: more than one YAML document")
	}
	if len(f.Expose) == 0 {
		return nil, errors.New("roconn: parse policy: expose lists no tables or views")
	}
	p := &Policy{Rules: f.Rules}
	seen := map[string]string{}
	for name, e := range f.Expose {
		if strings.TrimSpace(name) == "" {
			return nil, errors.New("roconn: parse policy: expose has an empty name")
		}
		if prev, ok := seen[fold(name)]; ok {
			return nil, fmt.Errorf("roconn: parse policy: %q and %q are the same object", prev, name)
		}
		seen[fold(name)] = name
		x := Exposed{Name: name, Columns: map[string]string{}}
		if e != nil {
			x.About = e.About
			cols := map[string]string{}
			for col, meaning := range e.Columns {
				if prev, ok := cols[fold(col)]; ok {
					return nil, fmt.Errorf("roconn: parse policy: %s: %q and %q are the same column", name, prev, col)
				}
				cols[fold(col)] = col
				x.Columns[col] = meaning
			}
			hidden := map[string]string{}
			for _, col := range e.Hide {
				if prev, ok := hidden[fold(col)]; ok {
					return nil, fmt.Errorf("roconn: parse policy: %s: %q and %q are the same hidden column", name, prev, col)
				}
				if desc, ok := cols[fold(col)]; ok {
					return nil, fmt.Errorf("roconn: parse policy: %s: %q is both described and hidden", name, desc)
				}
				hidden[fold(col)] = col
			}
			x.Hide = slices.Clone(e.Hide)
		}
		p.Expose = append(p.Expose, x)
	}
	slices.SortFunc(p.Expose, func(a, b Exposed) int { return strings.Compare(a.Name, b.Name) })
	for i, r := range p.Rules {
		if strings.TrimSpace(r) == "" {
			return nil, fmt.Errorf("roconn: parse policy: rule %d is empty", i+1)
		}
	}
	if f.Limits.Rows < 0 {
		return nil, fmt.Errorf("roconn: parse policy: limits.rows must not be negative, got %d", f.Limits.Rows)
	}
	p.Limits.Rows = f.Limits.Rows
	if f.Limits.Timeout != "" {
		d, err := time.ParseDuration(f.Limits.Timeout)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("roconn: parse policy: limits.timeout must be a positive duration such as \"5s\", got %q", f.Limits.Timeout)
		}
		p.Limits.Timeout = d
	}
	return p, nil
}
