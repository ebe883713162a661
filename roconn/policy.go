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
// readable, schema tables hidden", and so does a Policy with All set, which
// is how a policy file asks for that on purpose (`expose: all`).
type Policy struct {
	// All exposes every user table and view that can be read, as a nil
	// Policy does; Expose is then empty. Rules and Limits still apply.
	All    bool
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

// policyFile is the YAML form of a Policy that lists what it exposes.
type policyFile struct {
	Expose map[string]*exposedFile `yaml:"expose"`
	Rules  []string                `yaml:"rules"`
	Limits limitsFile              `yaml:"limits"`
}

// allPolicyFile is the YAML form of a Policy that exposes everything:
// `expose: all`.
type allPolicyFile struct {
	Expose string     `yaml:"expose"`
	Rules  []string   `yaml:"rules"`
	Limits limitsFile `yaml:"limits"`
}

type limitsFile struct {
	Rows    int    `yaml:"rows"`
	Timeout string `yaml:"timeout"`
}

// exposeAll is the value of expose that exposes every user table and view.
const exposeAll = "all"

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
// In place of the list, `expose: all` exposes every user table and view
// (schema tables stay hidden), as no policy at all does; it is how a
// deployment says that it means to. Rules and limits may stand beside it.
//
// An unknown key, a second YAML document, an empty expose list, an object
// listed twice (names compare without regard to ASCII case), a column hidden
// twice or both described and hidden, a timeout that
// is not a positive Go duration such as "5s", or a negative row limit is an
// error. Whether the objects and columns exist is checked by Open. Expose
// comes back sorted by name.
func ParsePolicy(data []byte) (*Policy, error) {
	// Which form is it? A scalar expose is `expose: all` (or a mistake);
	// anything else is decoded as a list, which reports its own errors.
	var probe struct {
		Expose yaml.Node `yaml:"expose"`
	}
	if yaml.Unmarshal(data, &probe) == nil && probe.Expose.Kind == yaml.ScalarNode && probe.Expose.Tag != "!!null" {
		if probe.Expose.Value != exposeAll {
			return nil, fmt.Errorf("roconn: parse policy: expose must list the tables and views to expose, or be %q to expose every one; got %q",
				exposeAll, probe.Expose.Value)
		}
		var f allPolicyFile
		if err := decodeStrict(data, &f); err != nil {
			return nil, err
		}
		return finishPolicy(&Policy{All: true}, f.Rules, f.Limits)
	}
	var f policyFile
	if err := decodeStrict(data, &f); err != nil {
		return nil, err
	}
	if len(f.Expose) == 0 {
		return nil, errors.New("roconn: parse policy: expose lists no tables or views (to expose every one, write expose: all)")
	}
	p := &Policy{}
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
	return finishPolicy(p, f.Rules, f.Limits)
}

// decodeStrict decodes the one YAML document in data into v, refusing
// unknown keys.
func decodeStrict(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("roconn: parse policy: the file is empty")
		}
		return fmt.Errorf("roconn: parse policy: %w", err)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return errors.New("roconn: parse policy: more than one YAML document")
	}
	return nil
}

// finishPolicy checks and sets the rules and limits of p, whichever form of
// the file they came from.
func finishPolicy(p *Policy, rules []string, lim limitsFile) (*Policy, error) {
	p.Rules = rules
	for i, r := range p.Rules {
		if strings.TrimSpace(r) == "" {
			return nil, fmt.Errorf("roconn: parse policy: rule %d is empty", i+1)
		}
	}
	if lim.Rows < 0 {
		return nil, fmt.Errorf("roconn: parse policy: limits.rows must not be negative, got %d", lim.Rows)
	}
	p.Limits.Rows = lim.Rows
	if lim.Timeout != "" {
		d, err := time.ParseDuration(lim.Timeout)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("roconn: parse policy: limits.timeout must be a positive duration such as \"5s\", got %q", lim.Timeout)
		}
		p.Limits.Timeout = d
	}
	return p, nil
}
