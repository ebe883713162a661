package agent_test

import (
	"fmt"
	"testing"

	"sqlbot/agent"
)

// examplePool is n verified questions of a few shapes, each a little
// different.
func examplePool(n int) []agent.Example {
	shapes := []string{
		"How many orders were shipped in %s %d?",
		"What was the revenue of the %s region in %d?",
		"Which %d products sold best in %s?",
		"Average order value for customers in %s during %d",
		"List the top %d customers of %s by spend",
	}
	months := []string{"January", "February", "March", "April", "May", "June", "July", "west", "south", "midwest"}
	pool := make([]agent.Example, n)
	for i := range pool {
		shape := shapes[i%len(shapes)]
		var q string
		if i%len(shapes) == 2 || i%len(shapes) == 4 {
			q = fmt.Sprintf(shape, i%20+1, months[i%len(months)])
		} else {
			q = fmt.Sprintf(shape, months[i%len(months)], 2020+i%6)
		}
		pool[i] = agent.Example{Question: q, SQL: fmt.Sprintf("SELECT count(*) FROM orders WHERE n = %d", i)}
	}
	return pool
}

// BenchmarkNearestExamples: choosing the examples for one question among
// 50, 500 and 5000 verified answers.
func BenchmarkNearestExamples(b *testing.B) {
	for _, n := range []int{50, 500, 5000} {
		pool := examplePool(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := agent.NearestExamples("How many orders were shipped in the west in 2024?", pool, agent.MaxExamples); len(got) == 0 {
					b.Fatal("no example")
				}
			}
		})
	}
}
