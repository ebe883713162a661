package draft

import (
	_ "embed"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// The word lists: given names, family names and city names in the Latin
// script, from @faker-js/faker (MIT licence, lexicon/LICENSE-faker.txt).
// Each is embedded by name, so a missing file fails the build.
var (
	//go:embed lexicon/first.txt
	firstNames string
	//go:embed lexicon/last.txt
	lastNames string
	//go:embed lexicon/city.txt
	cityNames string
	// Names of the cultures that write the family name first (Japan,
	// Korea, Vietnam, China), romanised, compiled for this package.
	//go:embed lexicon/east_family.txt
	eastFamilyNames string
	//go:embed lexicon/east_given.txt
	eastGivenNames string
)

// A lexicon holds the embedded word lists, folded (see fold). It is built
// once per Make and only read after that.
type lexicon struct {
	first, last, city map[string]bool
	// eastFamily and eastGiven are the names of eastFamilyNames and
	// eastGivenNames, kept apart from first and last: many are short
	// words of English ("an", "song", "park"), trusted only in pairs.
	eastFamily, eastGiven map[string]bool
}

func newLexicon() *lexicon {
	return &lexicon{first: readList(firstNames), last: readList(lastNames), city: readList(cityNames),
		eastFamily: readList(eastFamilyNames), eastGiven: readList(eastGivenNames)}
}

// readList returns the set of the folded lines of data, skipping blank lines
// and # comments.
func readList(data string) map[string]bool {
	set := make(map[string]bool, strings.Count(data, "\n"))
	for line := range strings.Lines(data) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		set[fold(line)] = true
	}
	return set
}

// fold lower-cases s and removes the diacritics of Latin letters, so
// "Gonçalves", "GONCALVES" and "goncalves" compare equal, as do "Straße"
// and "strasse".
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		r = unicode.ToLower(r)
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		b.WriteString(plain(r))
	}
	return b.String()
}

// plain maps a Latin letter with a diacritic, in the languages the lists
// cover, to its plain ASCII spelling, as people type names without them.
func plain(r rune) string {
	switch r {
	case 'à', 'á', 'â', 'ã', 'ä', 'å', 'ā', 'ă', 'ą':
		return "a"
	case 'æ':
		return "ae"
	case 'ç', 'ć', 'č':
		return "c"
	case 'ď', 'đ', 'ð':
		return "d"
	case 'è', 'é', 'ê', 'ë', 'ē', 'ė', 'ę', 'ě':
		return "e"
	case 'ğ':
		return "g"
	case 'ì', 'í', 'î', 'ï', 'ī', 'į', 'ı':
		return "i"
	case 'ł', 'ľ', 'ĺ':
		return "l"
	case 'ñ', 'ń', 'ň':
		return "n"
	case 'ò', 'ó', 'ô', 'õ', 'ö', 'ø', 'ō', 'ő':
		return "o"
	case 'œ':
		return "oe"
	case 'ŕ', 'ř':
		return "r"
	case 'ś', 'š', 'ş', 'ș':
		return "s"
	case 'ß':
		return "ss"
	case 'ť', 'ţ', 'ț':
		return "t"
	case 'þ':
		return "th"
	case 'ù', 'ú', 'û', 'ü', 'ū', 'ů', 'ű', 'ų':
		return "u"
	case 'ý', 'ÿ':
		return "y"
	case 'ź', 'ż', 'ž':
		return "z"
	case '\u0307': // the combining dot of a lower-cased Turkish İ
		return ""
	case '’':
		return "'"
	}
	if r >= 0x1e00 && r <= 0x1eff || r == 'ơ' || r == 'ư' {
		// Vietnamese and other letters with stacked marks (ễ, ạ, ươ):
		// the Latin letter they decompose to.
		if d := []rune(norm.NFD.String(string(r))); len(d) > 0 && d[0] < 0x80 {
			return string(d[0])
		}
	}
	return string(r)
}
