package draft

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"math/big"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A kind is what one sampled value looks like, when it looks private.
type kind uint8

const (
	kindNone kind = iota
	kindEmail
	kindPhone
	kindIP
	kindMAC
	kindCard
	kindIBAN
	kindJWT
	kindAPIKey
	kindHexSecret
	kindPassHash
	kindNationalID
	kindCoordinates
	kindStreet
	kindPersonName
	numKinds
)

// what names a kind in a reason, in the plural: "12 of 40 sampled values are
// e-mail addresses".
func (k kind) what() string {
	switch k {
	case kindEmail:
		return "e-mail addresses"
	case kindPhone:
		return "phone numbers"
	case kindIP:
		return "IP addresses"
	case kindMAC:
		return "MAC addresses"
	case kindCard:
		return "payment card numbers (Luhn checksum valid)"
	case kindIBAN:
		return "IBANs (mod-97 checksum valid)"
	case kindJWT:
		return "JSON web tokens"
	case kindAPIKey:
		return "API keys or secret tokens"
	case kindHexSecret:
		return "hex secrets or digests of 48 digits or more"
	case kindPassHash:
		return "password hashes"
	case kindNationalID:
		return "national identity or tax numbers"
	case kindCoordinates:
		return "precise coordinates"
	case kindStreet:
		return "street addresses"
	case kindPersonName:
		return "people's names"
	}
	return "unremarkable"
}

// strong reports whether a value of kind k is private on its own, with
// almost no chance of a value of another sort taking its shape (a checksum,
// a fixed prefix, a syntax nothing else has). A column needs fewer such
// values than it needs of the weaker kinds (phone, street, name).
func (k kind) strong() bool {
	switch k {
	case kindPhone, kindStreet, kindPersonName, kindIP:
		return false
	}
	return k != kindNone
}

// A detector recognises private values. It holds compiled patterns and the
// word lists, built once by newDetector and only read after that.
type detector struct {
	lex *lexicon

	email, emailIn                                                     *regexp.Regexp
	mac                                                                *regexp.Regexp
	apiKeys                                                            []*regexp.Regexp
	passHashes                                                         []*regexp.Regexp
	ssn, dni, nie, cpf, codiceFiscale, nino                            *regexp.Regexp
	coordPair, coordWKT, coordComma, coordDMS                          *regexp.Regexp
	isoDate, isoDateTime, dateDMY, dateYMDSlash, isoTime, uuid, hexRGB *regexp.Regexp
	phoneIn                                                            *regexp.Regexp
}

func newDetector() *detector {
	m := regexp.MustCompile
	return &detector{
		lex: newLexicon(),
		// Local part and domain as people write them; the domain needs a dot
		// and a top-level label of letters.
		email:   m(`^(?:mailto:)?[\p{L}\p{N}._%+'!#$&*=?^{|}~-]+@(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?\.)+\p{L}{2,24}$`),
		emailIn: m(`[\p{L}\p{N}._%+-]+@(?:[\p{L}\p{N}-]+\.)+\p{L}{2,24}`),
		mac:     m(`^(?:[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{2}(-[0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})$`),
		apiKeys: []*regexp.Regexp{
			m(`^sk-(?:proj-|ant-(?:api|admin)\d\d-|live-|test-|svcacct-)?[A-Za-z0-9_-]{20,}$`), // OpenAI, Anthropic and alike
			m(`^(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}$`),                                 // Stripe
			m(`^(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}$`),                     // AWS access key id
			m(`^gh[pousr]_[A-Za-z0-9]{36,}$`),                                                  // GitHub
			m(`^github_pat_[A-Za-z0-9_]{22,}$`),                                                // GitHub fine-grained
			m(`^xox[abposre]-[A-Za-z0-9-]{10,}$`),                                              // Slack
			m(`^xapp-\d-[A-Za-z0-9-]{10,}$`),                                                   // Slack app-level
			m(`^AIza[0-9A-Za-z_-]{35}$`),                                                       // Google
			m(`^glpat-[A-Za-z0-9_-]{20,}$`),                                                    // GitLab
			m(`^SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}$`),                              // SendGrid
			m(`^(?:hf|npm|pypi-AgEIcHlwaS5vcmc)_?[A-Za-z0-9_-]{30,}$`),                         // Hugging Face, npm, PyPI
			m(`^shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}$`),                                          // Shopify
			m(`^(?:Bearer|Basic|Token) [A-Za-z0-9._~+/=-]{16,}$`),                              // an Authorization header
			m(`^-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----`),                                   // a PEM private key
		},
		passHashes: []*regexp.Regexp{
			m(`^\$2[abxy]?\$\d\d\$[./A-Za-z0-9]{53}$`),                                                    // bcrypt
			m(`^\$argon2(?:id|i|d)\$(?:v=\d+\$)?m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$`),    // argon2
			m(`^\$[56]\$(?:rounds=\d+\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{43,86}$`),                     // sha256-crypt, sha512-crypt
			m(`^\$(?:1|apr1)\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}$`),                                    // md5-crypt
			m(`^\$(?:y|gy|7)\$[./A-Za-z0-9]+\$[./A-Za-z0-9$]+$`),                                          // yescrypt, scrypt (crypt form)
			m(`^\$scrypt\$[^$\s]+\$[^$\s]+\$[^$\s]+$`),                                                    // scrypt (passlib)
			m(`^\$pbkdf2(?:-sha(?:1|256|512))?\$\d+\$[./A-Za-z0-9+=]+\$[./A-Za-z0-9+=]+$`),                // pbkdf2 (passlib)
			m(`^(?:pbkdf2_sha(?:1|256|512)|argon2|bcrypt(?:_sha256)?|scrypt)\$[^\s]{20,}$`),               // Django
			m(`^(?:pbkdf2:sha(?:1|256|512)(?::\d+)?|scrypt:\d+:\d+:\d+)\$[^$\s]+\$[0-9a-f]{32,}$`),        // Werkzeug
			m(`^\{(?:SSHA|SHA|SMD5|MD5|CRYPT|SSHA256|SSHA512|SHA256|SHA512|PBKDF2[^}]*|ARGON2)\}[^\s]+$`), // LDAP
			m(`^\$[PH]\$[./0-9A-Za-z]{31}$`),                                                              // phpass
		},
		ssn:           m(`^(\d{3})-(\d{2})-(\d{4})$`),
		dni:           m(`^(\d{8})-?([A-Za-z])$`),
		nie:           m(`^([XYZxyz])-?(\d{7})-?([A-Za-z])$`),
		cpf:           m(`^\d{3}\.\d{3}\.\d{3}-\d{2}$`),
		codiceFiscale: m(`^[A-Za-z]{6}\d{2}[A-EHLMPR-Ta-ehlmpr-t]\d{2}[A-Za-z]\d{3}[A-Za-z]$`),
		nino:          m(`^[A-CEGHJ-PR-TW-Za-ceghj-pr-tw-z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-Da-d]$`),
		coordPair:     m(`^(?:geo:)?[(\[]?\s*(-?\d{1,3}\.\d+)\s*[,;/ ]\s*(-?\d{1,3}\.\d+)\s*[)\]]?$`),
		coordWKT:      m(`^(?i:POINT)\s*\(\s*(-?\d{1,3}\.\d+)\s+(-?\d{1,3}\.\d+)\s*\)$`),
		coordComma:    m(`^(-?\d{1,3},\d+)\s*[; ]\s*(-?\d{1,3},\d+)$`),
		coordDMS:      m(`^\d{1,3}°\s?\d{1,2}['′]\s?\d{1,2}(?:\.\d+)?["″]\s?[NSns][, ]*\d{1,3}°\s?\d{1,2}['′]\s?\d{1,2}(?:\.\d+)?["″]\s?[EWOewo]$`),
		isoDate:       m(`^\d{4}-\d{2}-\d{2}$`),
		isoDateTime:   m(`^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$`),
		dateDMY:       m(`^\d{1,2}[./-]\d{1,2}[./-]\d{2,4}$`),
		dateYMDSlash:  m(`^\d{4}[./]\d{1,2}[./]\d{1,2}$`),
		isoTime:       m(`^\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?$`),
		uuid:          m(`^(?i:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`),
		hexRGB:        m(`^#(?:[0-9A-Fa-f]{3}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})$`),
		phoneIn:       m(`(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{2,5}(?:[ .-]\d{2,5}){2,4}`),
	}
}

// kindOf returns what the text s looks like, trying the most specific shapes
// first: a bcrypt hash is not taken for an API key, nor an IP address for a
// phone number.
func (d *detector) kindOf(s string) kind {
	k, _ := d.classify(s)
	return k
}

// classify returns what s looks like and, when that is nothing else, its
// person-name score (see isPersonName), computing each detector at most once.
func (d *detector) classify(s string) (kind, float64) {
	s = strings.TrimSpace(s)
	if len(s) < 3 || len(s) > 2048 {
		return kindNone, 0
	}
	var digit, letter, space, at bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c == ' ':
			space = true
		case c == '@':
			at = true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			letter = true
		}
	}
	if k := d.shape(s, digit, letter, space, at); k != kindNone {
		return k, 0
	}
	var score float64
	if !digit && letter {
		score = d.isPersonName(s)
		if score >= 1 {
			return kindPersonName, score
		}
	}
	if at && d.emailIn.MatchString(s) {
		return kindEmail, 0 // inside a JSON document, a CSV line, a "To:" list
	}
	return kindNone, score
}

// shape tries the detectors that look at a value's form, skipping those
// whose characters s lacks.
func (d *detector) shape(s string, digit, letter, space, at bool) kind {
	if len(s) < 5 {
		return kindNone
	}
	keyish := !space || strings.HasPrefix(s, "Bearer ") || strings.HasPrefix(s, "Basic ") ||
		strings.HasPrefix(s, "Token ") || strings.HasPrefix(s, "-----BEGIN")
	switch {
	case d.isPassHash(s):
		return kindPassHash
	case isJWT(s):
		return kindJWT
	case keyish && d.isAPIKey(s):
		return kindAPIKey
	case !space && isHexSecret(s):
		return kindHexSecret
	case at && d.isEmail(s):
		return kindEmail
	case !digit:
		return kindNone
	case isIBAN(s):
		return kindIBAN
	case isCard(s):
		return kindCard
	case d.isMAC(s):
		return kindMAC
	case isIP(s):
		return kindIP
	case d.isNationalID(s):
		return kindNationalID
	case d.isCoordinates(s):
		return kindCoordinates
	case d.isPhone(s):
		return kindPhone
	case letter && space && d.isStreet(s):
		return kindStreet
	}
	return kindNone
}

func (d *detector) isEmail(s string) bool {
	if i := strings.LastIndexByte(s, '<'); i >= 0 && strings.HasSuffix(s, ">") { // "Name <a@b.example>"
		s = s[i+1 : len(s)-1]
	}
	return strings.Count(s, "@") == 1 && d.email.MatchString(s)
}

func (d *detector) isMAC(s string) bool { return d.mac.MatchString(s) }

func (d *detector) isPassHash(s string) bool {
	if s[0] != '$' && s[0] != '{' && !strings.ContainsAny(s, "$:") {
		return false
	}
	for _, re := range d.passHashes {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// isAPIKey reports whether s has the shape of a known kind of API key or
// token, or of a generic secret: at least 20 characters of a key alphabet
// with no spaces, mixing upper case, lower case and digits as random
// characters do (at least a fifth each of upper and lower case, and a
// digit), with high entropy. UUIDs, hex digests and slugs do not mix cases;
// words in camel case have too few capitals.
func (d *detector) isAPIKey(s string) bool {
	for _, re := range d.apiKeys {
		if re.MatchString(s) {
			return true
		}
	}
	return isGenericSecret(s)
}

// isHexSecret reports whether s is a long random hex string: 48 to 512 hex
// digits in one case, an even number of them, with letters and digits
// mixed as random bytes give them. That is a SHA-256 or longer digest or a
// token of 24 bytes or more. Shorter ones (32 and 40 digits) are left to the
// column's name: they are as often UUIDs without dashes, MD5 checksums of
// files and commit ids.
func isHexSecret(s string) bool {
	if len(s) < 48 || len(s) > 512 || len(s)%2 != 0 {
		return false
	}
	var upper, lower, digit int
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digit++
		case c >= 'a' && c <= 'f':
			lower++
		case c >= 'A' && c <= 'F':
			upper++
		default:
			return false
		}
	}
	if upper > 0 && lower > 0 {
		return false
	}
	return digit >= len(s)/8 && upper+lower >= len(s)/8 && entropy(s) >= 3.3
}

func isGenericSecret(s string) bool {
	if len(s) < 20 || len(s) > 512 {
		return false
	}
	var upper, lower, digit int
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			upper++
		case r >= 'a' && r <= 'z':
			lower++
		case r >= '0' && r <= '9':
			digit++
		case strings.ContainsRune("_-+/=.~", r):
		default:
			return false
		}
	}
	n := float64(len(s))
	return float64(upper) >= 0.2*n && float64(lower) >= 0.2*n && digit >= 1 && entropy(s) >= 3.5
}

// entropy returns the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	var h float64
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// isJWT reports whether s is a JSON web token: three base64url parts, the
// first of which decodes to a JSON object with an "alg".
func isJWT(s string) bool {
	if !strings.HasPrefix(s, "eyJ") {
		return false
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 || len(parts[1]) == 0 {
		return false
	}
	head, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[0], "="))
	if err != nil {
		return false
	}
	var h map[string]any
	if json.Unmarshal(head, &h) != nil {
		return false
	}
	_, ok := h["alg"]
	return ok
}

// digitsOf returns s without the spaces and dashes people group digits
// with, or "" if s has anything else but digits.
func digitsOf(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			b.WriteByte(c)
		case c == ' ' || c == '-':
		default:
			return ""
		}
	}
	return b.String()
}

// luhn reports whether the digit string s passes the Luhn check.
func luhn(s string) bool {
	if len(s) < 2 {
		return false
	}
	sum := 0
	double := false
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if c < '0' || c > '9' {
			return false
		}
		n := int(c - '0')
		if double {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
		double = !double
	}
	return sum%10 == 0
}

// isCard reports whether s is a payment card number: 13 to 19 digits
// (spaces or dashes between groups allowed), an issuer prefix of the card
// networks (2 to 6), and a valid Luhn check digit. A tenth of random digit
// strings pass Luhn, so a column needs most of its values to pass.
func isCard(s string) bool {
	d := digitsOf(s)
	if len(d) < 13 || len(d) > 19 || d[0] < '2' || d[0] > '6' {
		return false
	}
	if len(d) != len(s) { // grouped: only in groups of 4 (or Amex's 4-6-5)
		groups := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '-' })
		for _, g := range groups[:len(groups)-1] {
			if len(g) != 4 && len(g) != 6 {
				return false
			}
		}
	}
	return luhn(d)
}

// ibanLength is the length of an IBAN for each country that issues them.
func ibanLength(country string) int {
	switch country {
	case "NO":
		return 15
	case "BE":
		return 16
	case "BI", "DK", "FI", "FO", "GL", "NL", "SD":
		return 18
	case "MK", "SI":
		return 19
	case "AT", "BA", "EE", "KZ", "LT", "LU", "XK":
		return 20
	case "CH", "CR", "HR", "LI", "LV":
		return 21
	case "BG", "BH", "DE", "GB", "GE", "IE", "ME", "RS", "VA":
		return 22
	case "AE", "GI", "IL", "IQ", "TL":
		return 23
	case "AD", "CZ", "ES", "LY", "MD", "PK", "RO", "SA", "SE", "SK", "TN", "VG":
		return 24
	case "PT", "ST":
		return 25
	case "IS", "TR":
		return 26
	case "FR", "GR", "IT", "MC", "MR", "SM":
		return 27
	case "AL", "AZ", "BY", "CY", "DO", "GT", "HU", "LB", "PL", "SV":
		return 28
	case "BR", "EG", "PS", "QA", "UA":
		return 29
	case "JO", "KW", "MU":
		return 30
	case "MT", "SC":
		return 31
	case "LC":
		return 32
	case "RU":
		return 33
	}
	return 0
}

// isIBAN reports whether s is an IBAN, printed or electronic: a country that
// issues them, its length, and the mod-97 check (ISO 13616).
func isIBAN(s string) bool {
	s = strings.ToUpper(strings.ReplaceAll(s, " ", ""))
	if len(s) < 15 || len(s) > 34 || ibanLength(s[:2]) != len(s) {
		return false
	}
	if s[2] < '0' || s[2] > '9' || s[3] < '0' || s[3] > '9' {
		return false
	}
	rearranged := s[4:] + s[:4]
	var digits strings.Builder
	for i := 0; i < len(rearranged); i++ {
		c := rearranged[i]
		switch {
		case c >= '0' && c <= '9':
			digits.WriteByte(c)
		case c >= 'A' && c <= 'Z':
			digits.WriteString(strconv.Itoa(int(c-'A') + 10))
		default:
			return false
		}
	}
	n, ok := new(big.Int).SetString(digits.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

// isIP reports whether s is an IPv4 address in dotted quad form or an IPv6
// address, with an optional port ("203.0.113.7:443", "[2001:db8::1]:443").
func isIP(s string) bool {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().IsValid()
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return false
	}
	if a.Is4() {
		return strings.Count(s, ".") == 3
	}
	return true
}

// isNationalID reports whether s is a national identity or tax number of a
// kind with a distinctive shape or checksum: a US social security number,
// a Spanish DNI or NIE (check letter), a Brazilian CPF (check digits), an
// Italian codice fiscale, a UK national insurance number, a French NIR
// (mod-97 key), or a Dutch BSN or Portuguese NIF in their 9-digit forms
// (mod-11 checks, which one random number in eleven passes).
func (d *detector) isNationalID(s string) bool {
	const dniLetters = "TRWAGMYFPDXBNJZSQVHLCKE"
	if m := d.ssn.FindStringSubmatch(s); m != nil {
		return m[1] != "000" && m[1] != "666" && m[1][0] != '9' && m[2] != "00" && m[3] != "0000"
	}
	if m := d.dni.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		return strings.EqualFold(string(dniLetters[n%23]), m[2])
	}
	if m := d.nie.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(strconv.Itoa(strings.IndexByte("XYZ", strings.ToUpper(m[1])[0])) + m[2])
		return strings.EqualFold(string(dniLetters[n%23]), m[3])
	}
	if d.cpf.MatchString(s) {
		return cpfValid(strings.NewReplacer(".", "", "-", "").Replace(s))
	}
	if d.codiceFiscale.MatchString(s) || d.nino.MatchString(s) {
		return true
	}
	digits := digitsOf(s)
	switch {
	case len(digits) == 15 && (digits[0] == '1' || digits[0] == '2'):
		return nirValid(digits)
	case len(digits) == 11 && len(s) == 11:
		return cpfValid(digits)
	}
	return false
}

// cpfValid checks the two check digits of an 11-digit Brazilian CPF.
func cpfValid(d string) bool {
	if len(d) != 11 || strings.Count(d, d[:1]) == 11 {
		return false
	}
	check := func(n int) bool {
		sum := 0
		for i := 0; i < n; i++ {
			sum += int(d[i]-'0') * (n + 1 - i)
		}
		r := sum * 10 % 11
		if r == 10 {
			r = 0
		}
		return r == int(d[n]-'0')
	}
	return check(9) && check(10)
}

// nirValid checks the key of a 15-digit French NIR: 97 minus the first 13
// digits mod 97.
func nirValid(d string) bool {
	n, err := strconv.ParseInt(d[:13], 10, 64)
	if err != nil {
		return false
	}
	key, _ := strconv.Atoi(d[13:])
	month, _ := strconv.Atoi(d[3:5])
	return key == int(97-n%97) && month >= 1 && (month <= 12 || month >= 20)
}

// decimals returns the number of digits after the decimal point of a number
// as written, and whether s is a plain decimal number.
func decimals(s string) (int, bool) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	i := strings.IndexByte(s, '.')
	if i <= 0 || i == len(s)-1 {
		return 0, false
	}
	for _, part := range []string{s[:i], s[i+1:]} {
		for j := 0; j < len(part); j++ {
			if part[j] < '0' || part[j] > '9' {
				return 0, false
			}
		}
	}
	return len(s) - i - 1, true
}

// isCoordinates reports whether s is a latitude and longitude pair precise
// to about 11 metres or better: at least 4 decimals each, within range
// ("48.85661, 2.35222", "POINT(2.35222 48.85661)", "geo:48.8566,2.3522"), or
// degrees, minutes and seconds with both hemispheres.
func (d *detector) isCoordinates(s string) bool {
	if d.coordDMS.MatchString(s) {
		return true
	}
	var lat, lon string
	if m := d.coordWKT.FindStringSubmatch(s); m != nil {
		lon, lat = m[1], m[2]
	} else if m := d.coordPair.FindStringSubmatch(s); m != nil {
		lat, lon = m[1], m[2]
	} else if m := d.coordComma.FindStringSubmatch(s); m != nil { // "48,856613;2,352222"
		lat, lon = strings.Replace(m[1], ",", ".", 1), strings.Replace(m[2], ",", ".", 1)
	} else {
		return false
	}
	return preciseIn(lat, 90) && preciseIn(lon, 180)
}

// preciseIn reports whether s is a number within [-limit, limit] with at
// least 4 decimals.
func preciseIn(s string, limit float64) bool {
	n, ok := decimals(s)
	if !ok || n < 4 {
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && math.Abs(f) <= limit
}

// isDate reports whether s is a date or a date and time in a common format;
// such values are never phone numbers.
func (d *detector) isDate(s string) bool {
	if len(s) < 4 || len(s) > 40 || s[0] < '0' || s[0] > '9' {
		return false
	}
	return d.isoDate.MatchString(s) || d.isoDateTime.MatchString(s) || d.dateDMY.MatchString(s) ||
		d.dateYMDSlash.MatchString(s) || d.isoTime.MatchString(s)
}

// isPhone reports whether s is written as a phone number: 7 to 15 digits
// (E.164), grouped by spaces, dashes, dots, slashes or parentheses, with an
// optional extension, and one of: a leading + or 00 and country code; an
// area code in parentheses; a national trunk prefix 0 (0612345678,
// 030 1234567); or three or more groups (555-123-4567, 612 345 678).
// Dates, decimal numbers, numbers with thousands separators, ISBNs and bare
// digit strings not starting with a single 0 are not phone numbers: an order
// number is not a phone number.
func (d *detector) isPhone(s string) bool {
	s = strings.TrimSpace(s)
	if i := extensionAt(s); i > 0 {
		s = strings.TrimSpace(s[:i])
	}
	if s == "" || d.isDate(s) {
		return false
	}
	plus := s[0] == '+'
	body := s
	if plus {
		body = s[1:]
	}
	var digits, groups int
	var seps []byte
	parens := false
	inGroup := false
	groupLens := []int{}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
			if !inGroup {
				groups++
				groupLens = append(groupLens, 0)
				inGroup = true
			}
			groupLens[len(groupLens)-1]++
		case c == ' ' || c == '-' || c == '.' || c == '/':
			seps = append(seps, c)
			inGroup = false
		case c == '(' || c == ')':
			parens = true
			inGroup = false
		default:
			return false
		}
	}
	if digits < 7 || digits > 15 {
		return false
	}
	digitStr := digitsOnly(body)
	if len(digitStr) == 13 && (strings.HasPrefix(digitStr, "978") || strings.HasPrefix(digitStr, "979")) && !plus {
		return false // an ISBN
	}
	allSame := func(c byte) bool {
		for _, x := range seps {
			if x != c {
				return false
			}
		}
		return len(seps) > 0
	}
	if !plus && !parens && (allSame('.') || allSame(',')) {
		thousands := groupLens[0] <= 3
		for _, n := range groupLens[1:] {
			thousands = thousands && n == 3
		}
		if groups == 2 || thousands {
			return false // 1234.56, 1.234.567
		}
	}
	switch {
	case plus || strings.HasPrefix(s, "00") && len(digitStr) >= 10:
		return digits >= 8
	case parens:
		return true
	case groups == 1 && digitStr[0] == '0':
		return digitStr[1] != '0' && (digits == 10 || digits == 11)
	case groups == 1:
		return bareInternational(digitStr)
	case groups == 2:
		return digitStr[0] == '0' && digits >= 9
	default:
		for _, n := range groupLens {
			if n > 8 {
				return false
			}
		}
		return true
	}
}

// bareInternational reports whether the digit string d is an international
// number written without its +, as E.164 numbers are often stored, for the
// countries whose numbering this package knows: a mobile number of Germany,
// France, the UK, Spain, Italy, the Netherlands, Portugal or Brazil, or a
// North American number (1, an area code and exchange not starting with 0
// or 1). Each shape fixes the prefix and the length, so few order numbers
// of the same length take it by chance.
func bareInternational(d string) bool {
	n := len(d)
	has := func(p string) bool { return strings.HasPrefix(d, p) }
	switch {
	case n == 11 && d[0] == '1':
		return d[1] >= '2' && d[4] >= '2'
	case n == 11 && (has("336") || has("337") || has("346") || has("347") || has("316")):
		return true
	case n == 12 && (has("447") || has("393") || has("3519")):
		return true
	case (n == 12 || n == 13) && (has("4915") || has("4916") || has("4917")):
		return true
	case n == 13 && has("55") && d[4] == '9':
		return true
	}
	return false
}

// extensionAt returns where an extension such as " ext. 12" or " x12" starts
// in s, or -1.
func extensionAt(s string) int {
	l := strings.ToLower(s)
	for _, mark := range []string{" ext.", " ext", " x", " poste ", " durchwahl "} {
		if i := strings.LastIndex(l, mark); i > 0 {
			rest := strings.TrimSpace(l[i+len(mark):])
			if rest != "" && digitsOnly(rest) == rest {
				return i
			}
		}
	}
	return -1
}

func digitsOnly(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// words splits s into words at spaces and commas, keeping the commas out.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == ',' })
}

// isStreet reports whether s is a street address: a house number next to a
// street word of one of the supported languages, in that language's order
// ("1498 rue Bélanger", "221B Baker Street", "Theodor-Heuss-Straße 34",
// "Av. Brigadeiro Faria Lima, 2170", "Kerkstraat 12a", "Via Roma 12, 00184
// Roma", "Rue de la Loi 16"), or a post-office box. The street word may be a
// whole word or, in German, Dutch and the Nordic languages, the end of a
// compound (Hauptstraße, Kerkstraat, Ullevålsveien). "Trail Runner 2" and
// "Route 66 Mug" are not addresses: an English street word follows its
// number, and a number after the street name ends the address.
func (d *detector) isStreet(s string) bool {
	ws := words(s)
	if len(ws) < 2 || len(ws) > 14 {
		return false
	}
	f := fold(s)
	for _, p := range []string{"po box", "p.o. box", "postfach ", "apartado ", "caixa postal", "casella postale", "boite postale", "postbus "} {
		if strings.HasPrefix(f, p) {
			return digitsOnly(s) != ""
		}
	}
	raw := strings.Fields(s) // keeps the commas, which end an address's street part
	for i, w := range ws {
		fw := strings.Trim(fold(w), ".,;:()")
		class := streetClass(fw)
		if class == 0 {
			continue
		}
		for j, n := range ws {
			if !houseNumber(n) {
				continue
			}
			switch {
			case j < i && class&numberBefore != 0 && j <= 1 && i-j <= 4:
				if class&englishOrder == 0 || i-j >= 2 {
					return true
				}
			case j > i && class&numberAfter != 0 && j-i <= 6:
				if j == len(ws)-1 || endsPart(raw, n) || (j+1 < len(ws) && startsWithDigit(ws[j+1])) {
					return true
				}
			}
		}
	}
	return false
}

// endsPart reports whether the word n appears in raw followed by a comma.
func endsPart(raw []string, n string) bool {
	for _, r := range raw {
		if strings.HasSuffix(r, ",") && strings.TrimSuffix(r, ",") == n {
			return true
		}
	}
	return false
}

func startsWithDigit(w string) bool { return w != "" && w[0] >= '0' && w[0] <= '9' }

// Where a street word's house number goes.
const (
	numberBefore = 1 << iota // "1498 rue Bélanger"
	numberAfter              // "Hauptstraße 5", "Via Roma 12"
	englishOrder             // the street's name comes between: "221B Baker Street"
)

// streetClass says whether the folded word w names a street, in English,
// German, French, Spanish, Portuguese, Italian, Dutch or a Nordic language,
// and where its house number goes; 0 if it does not.
func streetClass(w string) int {
	switch w {
	case "street", "st", "road", "rd", "lane", "ln", "drive", "dr", "blvd", "way", "court", "ct",
		"square", "sq", "terrace", "highway", "hwy", "parkway", "pkwy", "circle", "cir", "crescent", "cres",
		"close", "row", "alley", "trail", "mews", "grove", "gardens", "ave":
		return numberBefore | englishOrder
	case "rue", "avenue", "boulevard", "bd", "chemin", "impasse", "quai", "route", "cours", "faubourg", "place", "pl":
		return numberBefore | numberAfter
	case "calle", "c/", "avenida", "avda", "av", "paseo", "plaza", "camino", "carretera", "ronda", "travesia",
		"glorieta", "callejon", "rua", "travessa", "praca", "largo", "estrada", "alameda", "rodovia", "beco",
		"ladeira", "via", "viale", "piazza", "corso", "vicolo", "strada", "piazzale", "lungomare", "contrada",
		"strasse", "str", "gasse", "weg", "platz", "allee", "ring", "damm", "ufer", "chaussee", "steig",
		"straat", "laan", "plein", "gracht", "kade", "singel", "dijk", "steeg", "pad", "hof",
		"vej", "veien", "gata", "gatan", "gade", "katu", "tie":
		return numberAfter
	}
	for _, suf := range []string{"strasse", "str", "gasse", "weg", "platz", "allee", "damm", "ufer",
		"straat", "laan", "gracht", "plein", "kade", "singel", "dijk", "steeg",
		"veien", "vegen", "vej", "gatan", "gata", "gade", "katu", "tie"} {
		if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) {
			return numberAfter
		}
	}
	return 0
}

// houseNumber reports whether w is a house number: 1 to 5 digits, maybe with
// a letter or a range ("12", "12a", "34-36", "2170,", "5B", "n°5").
func houseNumber(w string) bool {
	w = strings.TrimRight(w, ".,;:")
	w = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(w, "n°"), "nº"), "#")
	n := 0
	for n < len(w) && w[n] >= '0' && w[n] <= '9' {
		n++
	}
	if n == 0 || n > 5 {
		return false
	}
	rest := w[n:]
	switch {
	case rest == "":
		return true
	case len(rest) == 1 && unicode.IsLetter(rune(rest[0])):
		return true
	case rest[0] == '-' || rest[0] == '/':
		return digitsOnly(rest[1:]) == rest[1:] && len(rest) > 1 && len(rest) <= 5
	case rest == "st" || rest == "nd" || rest == "rd" || rest == "th":
		return false // "5th" is an ordinal street name, not a house number
	}
	return false
}

// isPersonName scores whether s is a person's name: 1 when it is two to four
// name-shaped words (capitalised, letters, apostrophes and hyphens, with the
// particles of the supported languages such as "van", "de", "dos") whose
// first word is a known given name, or whose given name is an initial and
// last word a known family name, or "Family, Given" with a known given name;
// 0.5 when the first word is a known given name and the last word is
// name-shaped but not a known family name. Values with digits, a company's
// legal form, a street word, or that are a city's name score 0.
func (d *detector) isPersonName(s string) float64 {
	if strings.ContainsAny(s, "0123456789@/&|+=_#") || len(s) > 80 {
		return 0
	}
	if d.lex.city[fold(s)] {
		return 0
	}
	var given, family string
	if i := strings.IndexByte(s, ','); i > 0 { // "Gonçalves, Luís"
		family, given = strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		if strings.Contains(given, ",") {
			return 0
		}
		s = given + " " + family
	}
	lower := s == strings.ToLower(s)
	if lower {
		// A column kept in lower case for searching: only names whose given
		// and family names are both known count, as shape says nothing.
		s = capitalise(s)
	}
	ws := strings.Fields(s)
	for len(ws) > 2 && personTitle(fold(strings.TrimSuffix(ws[0], "."))) { // "Dr. Anna Kowalska"
		ws = ws[1:]
	}
	var parts []string
	for _, w := range ws {
		fw := fold(w)
		if nameParticle(fw) {
			continue
		}
		if legalForm(strings.Trim(fw, ".")) {
			return 0
		}
		if !nameShaped(w) {
			return 0
		}
		parts = append(parts, fw)
	}
	if len(parts) < 2 || len(parts) > 4 {
		return 0
	}
	first, last := strings.Trim(parts[0], "."), parts[len(parts)-1]
	if lower {
		if d.lex.first[first] && d.lex.last[last] && len(first) > 1 || d.eastName(first, last, family != "") {
			return 1
		}
		return 0
	}
	switch {
	case d.lex.first[first] && d.lex.last[last]:
		return 1
	case d.eastName(first, last, family != ""):
		return 1
	case len(first) == 1 && d.lex.last[last]: // "J. Smith"
		return 1
	case d.lex.first[first] && d.lex.first[last] && family == "" && len(parts) == 2:
		return 0.5 // "Rose Marie": two given names, or a given name and a rare family name
	case d.lex.first[first]:
		return 0.5
	}
	return 0
}

// eastName reports whether first and last, the first and last parts of a
// name as written (folded), are a family and a given name of Japan, Korea,
// Vietnam or China in either order: "Watanabe Hiroshi", "Nguyen Van An",
// "Kim Min-jun", "Hiroshi Watanabe". A hyphenated given name is known when
// each of its syllables is. Very short pairs ("Oh My", "Le An") are not
// trusted: too many short words are also such names. comma says the value
// was "Family, Given", already turned given first.
func (d *detector) eastName(first, last string, comma bool) bool {
	if len(first)+len(last) < 5 {
		return false
	}
	given := func(w string) bool {
		if d.lex.eastGiven[w] || d.lex.eastGiven[strings.ReplaceAll(w, "-", "")] {
			return true
		}
		syl := strings.Split(w, "-")
		if len(syl) < 2 {
			return false
		}
		for _, s := range syl {
			if !d.lex.eastGiven[s] {
				return false
			}
		}
		return true
	}
	if !comma && d.lex.eastFamily[first] && given(last) {
		return true
	}
	return given(first) && (d.lex.eastFamily[last] || d.lex.last[last])
}

// isNamePart reports whether the single word s is a known given or family
// name, for columns that hold one name part per value.
func (d *detector) isNamePart(s string) bool {
	if !nameShaped(s) || strings.ContainsAny(s, " ,") {
		return false
	}
	f := fold(s)
	return (d.lex.first[f] || d.lex.last[f]) && !d.lex.city[f]
}

// nameShaped reports whether w looks like one word of a name: a capital
// letter, then letters with maybe apostrophes, hyphens or a final dot (an
// initial).
func nameShaped(w string) bool {
	r, size := utf8.DecodeRuneInString(w)
	if !unicode.IsUpper(r) {
		return false
	}
	rest := w[size:]
	if rest == "." || rest == "" {
		return true
	}
	letters := 0
	for _, r := range rest {
		switch {
		case unicode.IsLetter(r):
			letters++
		case r == '\'' || r == '’' || r == '-':
		default:
			return false
		}
	}
	// All capitals is a name in some registers ("MÜLLER"), and an acronym
	// in others; let the lists decide.
	return letters > 0
}

// capitalise upper-cases the first letter of each word of s.
func capitalise(s string) string {
	rs := []rune(s)
	for i, r := range rs {
		if i == 0 || rs[i-1] == ' ' || rs[i-1] == '-' {
			rs[i] = unicode.ToUpper(r)
		}
	}
	return string(rs)
}

// personTitle reports whether the folded word w, without its dot, is a
// title put before a person's name.
func personTitle(w string) bool {
	switch w {
	case "mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "dame", "herr", "frau", "m", "mme", "mlle",
		"sr", "sra", "srta", "don", "dona", "sig", "sig.ra", "dott", "dott.ssa", "dra", "ing", "mag", "dhr", "mevr":
		return true
	}
	return false
}

func nameParticle(w string) bool {
	switch w {
	case "de", "da", "do", "dos", "das", "del", "della", "degli", "di", "du", "des", "la", "le", "van", "von",
		"der", "den", "ter", "ten", "y", "e", "zu", "af", "av", "mc", "st.", "bin", "al", "el":
		return true
	}
	return false
}

// legalForm reports whether w is the legal form of a company, which a
// person's name never holds.
func legalForm(w string) bool {
	switch w {
	case "gmbh", "ag", "kg", "ohg", "ug", "ev", "ltd", "limited", "inc", "llc", "llp", "lp", "plc", "corp", "corporation",
		"co", "company", "sa", "s.a", "sas", "sarl", "sl", "s.l", "srl", "spa", "s.p.a", "bv", "b.v", "nv", "n.v", "ab", "as",
		"asa", "oy", "lda", "ltda", "eireli", "me", "s.r.o", "sro", "a.s", "sp", "group", "holding", "holdings", "gbr",
		"cie", "&", "and", "und", "et", "foundation", "stiftung", "verein", "association", "bank", "banco", "university",
		"universitat", "universite", "universidad", "hotel", "restaurant", "cafe", "shop", "store", "studio", "services":
		return true
	}
	return false
}

// freeText reports whether s reads as prose: six or more words, or sixty
// characters with spaces, or several lines.
func freeText(s string) bool {
	if strings.ContainsAny(s, "\n\r") && strings.Count(strings.TrimSpace(s), " ") > 0 {
		return true
	}
	n := len(strings.Fields(s))
	return n >= 6 || (len(s) >= 60 && n >= 3)
}

// embeddedContact reports whether free text s holds an e-mail address or a
// phone number somewhere inside it.
func (d *detector) embeddedContact(s string) bool {
	if d.emailIn.MatchString(s) {
		return true
	}
	for _, m := range d.phoneIn.FindAllString(s, 4) {
		if d.isPhone(m) {
			return true
		}
	}
	return false
}

// booleanLike reports whether s is a yes/no flag as databases store them.
func booleanLike(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "0", "1", "true", "false", "t", "f", "yes", "no", "y", "n", "ja", "nein", "oui", "non", "si", "sí", "sim", "não", "nao":
		return true
	}
	return false
}
