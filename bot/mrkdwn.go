package bot

import (
	"strings"
	"unicode/utf8"

	"sqlbot/agent/present"
)

// Characters that Slack's mrkdwn is written with.
const (
	ellipsis       = "…"
	zeroWidthSpace = "\u200b"
)

// modelText adapts the Markdown that models write to Slack's mrkdwn
// (**bold** is *bold*, a ```sql fence is a plain one), with control and
// bidi-control characters replaced (present.Block). It does not escape.
func modelText(s string) string {
	s = present.Block(s)
	s = strings.ReplaceAll(s, "**", "*")
	s = strings.ReplaceAll(s, "```sql\n", "```")
	return strings.TrimSpace(s)
}

// escape makes untrusted text inert in mrkdwn: Slack reads &, < and > as the
// start of entities, links and mentions (<!channel>, <@U…>, <http://…|…>).
func escape(s string) string {
	var sb strings.Builder
	sb.Grow(len(s))
	for _, r := range s {
		switch r {
		case '&':
			sb.WriteString("&amp;")
		case '<':
			sb.WriteString("&lt;")
		case '>':
			sb.WriteString("&gt;")
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// codeBlock puts s in a ``` block that fits one section: made safe
// (present.Block) and escaped, with runs of
// backticks broken so that s cannot end the block, and cut with a note when
// it is too long.
func codeBlock(s string) string {
	s = defuseFence(strings.TrimSpace(present.Block(s)))
	const fence = "```"
	budget := maxSectionChars - 2*len(fence) - 60 // room for the "cut" note
	e := escape(s)
	if utf8.RuneCountInString(e) <= maxSectionChars-2*len(fence) {
		return fence + e + fence
	}
	// Cut on the unescaped text, so that no entity is split in half.
	runes := []rune(s)
	keep, used := 0, 0
	for i, r := range runes {
		w := 1
		switch r {
		case '&':
			w = len("&amp;")
		case '<', '>':
			w = len("&lt;")
		}
		if used+w > budget {
			break
		}
		used += w
		keep = i + 1
	}
	return fence + escape(string(runes[:keep])) + "\n" + ellipsis + " (" + present.Plural(len(runes)-keep, "more character") + ")" + fence
}

// defuseFence breaks runs of backticks (with zero-width spaces, which do
// not change the display width) so that s cannot close a ``` block.
func defuseFence(s string) string {
	for strings.Contains(s, "``") {
		s = strings.ReplaceAll(s, "``", "`"+zeroWidthSpace+"`")
	}
	if strings.HasPrefix(s, "`") {
		s = zeroWidthSpace + s
	}
	if strings.HasSuffix(s, "`") {
		s += zeroWidthSpace
	}
	return s
}

// splitMrkdwn cuts text written as mrkdwn into pieces of at most size runes,
// at line ends where it can, keeping ``` blocks balanced in every piece.
func splitMrkdwn(text string, size int) []string {
	const fence = "```"
	var parts []string
	var cur strings.Builder
	inCode := false // whether cur is inside an open ``` block
	curLen := 0
	flush := func() {
		s := cur.String()
		if inCode {
			s += fence
		}
		if strings.TrimSpace(s) != "" {
			parts = append(parts, s)
		}
		cur.Reset()
		curLen = 0
		if inCode {
			cur.WriteString(fence)
			curLen = len(fence)
		}
	}
	for line := range strings.SplitAfterSeq(text, "\n") {
		for line != "" {
			room := size - curLen - len(fence) - 1 // keep room to close a fence
			n := utf8.RuneCountInString(line)
			if n <= room {
				cur.WriteString(line)
				curLen += n
				if strings.Count(line, fence)%2 == 1 {
					inCode = !inCode
				}
				break
			}
			if curLen > len(fence) {
				flush()
				continue
			}
			// A single line longer than a section: cut it.
			r := []rune(line)
			cut := max(room, 1)
			chunk := string(r[:cut])
			cur.WriteString(chunk)
			curLen += cut
			if strings.Count(chunk, fence)%2 == 1 {
				inCode = !inCode
			}
			line = string(r[cut:])
			flush()
		}
	}
	flush()
	return parts
}

// fallback is the notification text: short, escaped, one paragraph.
func fallback(s string) string {
	return escape(present.Ellipsize(present.OneLine(s), maxFallbackChars))
}

// plainFallback strips the mrkdwn this package writes (entities stay
// escaped, which fallback would double) and returns plain text for fallback.
func plainFallback(mrkdwn string) string {
	r := strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "*", "", "`", "")
	return r.Replace(mrkdwn)
}

// cutEscaped shortens escaped mrkdwn to at most n runes, ending in …, without
// splitting an entity (&amp; &lt; &gt;) and closing an open ``` block.
func cutEscaped(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	keep := n - 4 // room for … and a closing ```
	if keep < 0 {
		keep = 0
	}
	if amp := strings.LastIndex(string(r[:keep]), "&"); amp >= 0 && !strings.Contains(string(r[:keep])[amp:], ";") {
		keep = utf8.RuneCountInString(string(r[:keep])[:amp])
	}
	if sp := strings.LastIndexAny(string(r[:keep]), " \n"); sp > 0 && utf8.RuneCountInString(string(r[:keep])[:sp]) > keep*3/4 {
		keep = utf8.RuneCountInString(string(r[:keep])[:sp])
	}
	out := strings.TrimRight(string(r[:keep]), " \n") + ellipsis
	if strings.Count(out, "```")%2 == 1 {
		out += "```"
	}
	return out
}
