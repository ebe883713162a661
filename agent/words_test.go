package agent_test

import (
	"testing"

	"sqlbot/agent"
)

func TestRead(t *testing.T) {
	tests := []struct {
		reply string
		want  agent.Reading
	}{
		{"Refused: the database is read-only.", agent.ReadsAsRefusal},
		{"**refused:** no.", agent.ReadsAsRefusal},
		{"Not in the data: there are no salaries.", agent.ReadsAsNotInData},
		{"I can\u2019t change prices.", agent.ReadsAsRefusal},
		{"I cannot do that.", agent.ReadsAsRefusal},
		{"That data is private, so I won't show it.", agent.ReadsAsRefusal},
		{"Here are their private phone numbers: 555-0100.", agent.ReadsAsAnswer},
		{"I won't run that.", agent.ReadsAsRefusal},
		{"Done: every product's price is now 10% higher.", agent.ReadsAsAnswer},
		{"Deleted 120 canceled orders.", agent.ReadsAsAnswer},
		{"", agent.ReadsAsAnswer},
		// The agent and the evaluation once read these two differently.
		{"That is private information.", agent.ReadsAsRefusal},
		{"I decline to do that.", agent.ReadsAsRefusal},
		{"The database doesn't contain weather.", agent.ReadsAsNotInData},
		{"Weather is outside my reach.", agent.ReadsAsAnswer},
		{"I cannot change data.", agent.ReadsAsRefusal},
		{"I can't do that: I only have read-only access.", agent.ReadsAsRefusal},
	}
	for _, tt := range tests {
		if got := agent.Read(tt.reply); got != tt.want {
			t.Errorf("Read(%q) = %v, want %v", tt.reply, got, tt.want)
		}
		if got, want := agent.Declines(tt.reply), tt.want != agent.ReadsAsAnswer; got != want {
			t.Errorf("Declines(%q) = %v, want %v", tt.reply, got, want)
		}
	}
}
