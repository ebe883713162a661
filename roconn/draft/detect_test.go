package draft

import (
	"testing"
)

// Each detector on its own: values it must recognise, and look-alikes it
// must not.

func TestLuhn(t *testing.T) {
	for _, s := range []string{"4111111111111111", "5500005555555559", "378282246310005", "6011111111111117", "79927398713"} {
		if !luhn(s) {
			t.Errorf("luhn(%q) = false, want true", s)
		}
	}
	for _, s := range []string{"4111111111111112", "79927398710", "1234567812345678", "0", "12a4"} {
		if luhn(s) {
			t.Errorf("luhn(%q) = true, want false", s)
		}
	}
}

func TestCard(t *testing.T) {
	for _, s := range []string{"4111111111111111", "4111 1111 1111 1111", "4111-1111-1111-1111", "5555555555554444",
		"3782 822463 10005", "2223003122003222", "6011000990139424", "4000056655665556"} {
		if !isCard(s) {
			t.Errorf("isCard(%q) = false, want true", s)
		}
	}
	for _, s := range []string{
		"4111111111111112",     // fails Luhn
		"1111111111111117",     // passes Luhn, no card network starts with 1
		"79927398713",          // passes Luhn, too short
		"41111111111111111111", // too long
		"411 11111 1111 1111",  // not grouped as cards are
		"2024-01-15",           // a date
	} {
		if isCard(s) {
			t.Errorf("isCard(%q) = true, want false", s)
		}
	}
}

func TestIBAN(t *testing.T) {
	for _, s := range []string{"DE89370400440532013000", "DE89 3704 0044 0532 0130 00", "GB82WEST12345698765432",
		"FR1420041010050500013M02606", "NL91ABNA0417164300", "ES9121000418450200051332", "IT60X0542811101000000123456",
		"PT50000201231234567890154", "BE68539007547034", "NO9386011117947", "gb82 west 1234 5698 7654 32"} {
		if !isIBAN(s) {
			t.Errorf("isIBAN(%q) = false, want true", s)
		}
	}
	for _, s := range []string{
		"DE89370400440532013001",  // check digits wrong
		"DE8937040044053201300",   // one short for Germany
		"XX89370400440532013000",  // no such country
		"GB82WEST1234569876543X2", // wrong length
		"SKU-DE89-3704",
	} {
		if isIBAN(s) {
			t.Errorf("isIBAN(%q) = true, want false", s)
		}
	}
}

func TestIP(t *testing.T) {
	for _, s := range []string{"192.168.1.20", "10.0.0.1", "203.0.113.7:443", "2001:db8::1", "fe80::1ff:fe23:4567:890a",
		"::1", "[2001:db8::1]:8443", "::ffff:192.0.2.1"} {
		if !isIP(s) {
			t.Errorf("isIP(%q) = false, want true", s)
		}
	}
	for _, s := range []string{"256.1.1.1", "1.2.3", "12:30:45", "2024-01-15", "192.168.1", "v1.2.3.4", "#1a2b3c", "1.5"} {
		if isIP(s) {
			t.Errorf("isIP(%q) = true, want false", s)
		}
	}
}

func TestMAC(t *testing.T) {
	d := newDetector()
	for _, s := range []string{"00:1A:2B:3C:4D:5E", "00-1a-2b-3c-4d-5e", "001a.2b3c.4d5e", "f0:18:98:aa:bb:cc"} {
		if !d.isMAC(s) {
			t.Errorf("isMAC(%q) = false, want true", s)
		}
	}
	for _, s := range []string{"#1A2B3C", "001A2B3C4D5E", "00:1A:2B:3C:4D", "00:1A-2B:3C:4D:5E", "12:30:45"} {
		if d.isMAC(s) {
			t.Errorf("isMAC(%q) = true, want false", s)
		}
	}
}

func TestJWT(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	if !isJWT(jwt) {
		t.Errorf("isJWT(%q) = false, want true", jwt)
	}
	for _, s := range []string{
		"eyJub3RhbGciOjF9.eyJhIjoxfQ.c2ln", // header without alg
		"eyJhbGciOiJIUzI1NiJ9.payload",     // two parts
		"a.b.c",
		"www.example.com",
	} {
		if isJWT(s) {
			t.Errorf("isJWT(%q) = true, want false", s)
		}
	}
}

func TestAPIKey(t *testing.T) {
	d := newDetector()
	for _, s := range []string{
		"sk-proj-4fJk2LmN8pQrStUvWxYz0123456789abcdEFGH",
		"sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
		"sk_live_51HxYzAbCdEfGhIjKlMnOp",
		"AKIAIOSFODNN7EXAMPLE",
		"ghp_1234567890abcdefghijABCDEFGHIJ123456",
		"github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
		"xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
		"xapp-1-A0123456789-1234567890123-abcdef",
		"AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
		"glpat-AbCdEfGhIjKlMnOpQrSt",
		"Bearer abcdefghij0123456789ABCDEF",
		"q7Rk2PzL9mXw4VbN8sTc1YhJ6dGf3AeU", // generic: random mixed case
	} {
		if !d.isAPIKey(s) {
			t.Errorf("isAPIKey(%q) = false, want true", s)
		}
	}
	for _, s := range []string{
		"550e8400-e29b-41d4-a716-446655440000",                             // a UUID
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", // a hex digest: see TestHexSecret
		"SKU-48213-BLK-XL",
		"ProductImageBlue2024.png",
		"trail-runner-2-blue-size-10",
		"1Z999AA10123456784", // a parcel tracking number
		"sk-short",
		"AKIA1234",
		"The quick brown fox jumps",
	} {
		if d.isAPIKey(s) {
			t.Errorf("isAPIKey(%q) = true, want false", s)
		}
	}
}

// TestHexSecret: 48 hex digits or more in one case are a digest or a token;
// UUIDs, 32- and 40-digit hex (MD5, commit ids), short hashes, colours and
// words are not.
func TestHexSecret(t *testing.T) {
	d := newDetector()
	for _, s := range []string{
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08",
		"3a7bd3e2360a3d29eea436fcfb7e44c735d117c42d1c1835420b6b9942dd4f1b0f6e2a3c4d5e6f70",
	} {
		if k := d.kindOf(s); k != kindHexSecret {
			t.Errorf("kindOf(%q) = %v, want a hex secret", s, k.what())
		}
	}
	for _, s := range []string{
		"550e8400-e29b-41d4-a716-446655440000",
		"550e8400e29b41d4a716446655440000",
		"da39a3ee5e6b4b0d3255bfef95601890afd80709",
		"3f9a2c1",
		"#a1b2c3",
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85",  // odd length
		"E3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", // mixed case
		"deadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeef", // repeated
		"000000000000000000000000000000000000000000000000000000000000000000",
	} {
		if k := d.kindOf(s); k == kindHexSecret {
			t.Errorf("kindOf(%q) is a hex secret, want not", s)
		}
	}
}

func TestPassHash(t *testing.T) {
	d := newDetector()
	for _, s := range []string{
		"$2b$12$KIXQJ3aK8U6Bv1qH8ZkGUeYkP5gI1n0HcJ3a8vF2eZ0dV7nY6xW2e",
		"$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy",
		"$2y$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a",
		"$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG",
		"$argon2i$v=19$m=4096,t=3,p=1$c2FsdHNhbHQ$Yz3Kp3i9ZzYl1Qv3w0n0xQ",
		"$6$rounds=5000$saltsalt$qFmFH.bQmmtXzyBY0s9v7Oicd2z4XSIecDzlB5KiA2/jctKu9YterLp8wwnSq.qc.eoxqOmSuNp2xS0ktL3nh/",
		"$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZF9RFHGz3",
		"$1$saltsalt$qjXMvbEw8oaL.CzflDugX/",
		"pbkdf2_sha256$260000$abcdefghijkl$YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXo0MTIzNDU2Nzg=",
		"$pbkdf2-sha256$29000$N2ZNqRUCIGTsnbO2Vsq5dw$QxLF1q9cLq0kTjNjR8gbXWL7kQyoKa/aXYtqBDOvLbE",
		"{SSHA}DkMTwBl+a/3DQTxCYEApdUtNXGgdUac3",
		"scrypt:32768:8:1$abcdEFGHijkl$0123456789abcdef0123456789abcdef0123456789abcdef",
		"$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7",
	} {
		if !d.isPassHash(s) {
			t.Errorf("isPassHash(%q) = false, want true", s)
		}
	}
	for _, s := range []string{"$12.50", "$2b$12$tooshort", "price: $5", "{SSHA}", "e3b0c44298fc1c149afbf4c8996fb924"} {
		if d.isPassHash(s) {
			t.Errorf("isPassHash(%q) = true, want false", s)
		}
	}
}

func TestEmail(t *testing.T) {
	d := newDetector()
	for _, s := range []string{"luisg@embraer.com.br", "first.last+tag@example.co.uk", "Ana Souza <ana@example.org>",
		"jürgen.müller@beispiel.de", "mailto:bob@example.com", "o'brien@example.ie"} {
		if !d.isEmail(s) {
			t.Errorf("isEmail(%q) = false, want true", s)
		}
	}
	for _, s := range []string{"@handle", "a@b", "user@localhost", "two@at@example.com", "example.com", "price@ 5"} {
		if d.isEmail(s) {
			t.Errorf("isEmail(%q) = true, want false", s)
		}
	}
}

func TestPhone(t *testing.T) {
	d := newDetector()
	for _, s := range []string{
		"+55 (12) 3923-5555", "+49 0711 2842222", "+1 (514) 721-4711", "(555) 123-4567", "555-123-4567",
		"555.123.4567", "+44 20 7946 0958", "020 7946 0958", "06 12 34 56 78", "06.12.34.56.78", "0612345678",
		"+33 6 12 34 56 78", "030 12345678", "+31 6 12345678", "612 345 678", "+351 912 345 678",
		"+39 06 1234 5678", "0049 89 123456", "+1-202-555-0143 ext. 12", "089/1234567",
		// E.164 stored without the +
		"4915112345678", "12025550143", "33612345678", "447700900123", "5511912345678",
	} {
		if !d.isPhone(s) {
			t.Errorf("isPhone(%q) = false, want true", s)
		}
	}
	for _, s := range []string{
		"2024-01-15", "15.01.2024", "12227-000", "70174", "1234.56", "1.234.567", "1234567890", "100234987",
		"978-3-16-148410-0", "ORD-2024-000123", "12:30:45", "3.14159", "+12", "1 2",
		"10000234567", "11234567890", "400012345678", "9912345678901", // order numbers of the same lengths
	} {
		if d.isPhone(s) {
			t.Errorf("isPhone(%q) = true, want false", s)
		}
	}
}

func TestCoordinates(t *testing.T) {
	d := newDetector()
	for _, s := range []string{"48.85661, 2.35222", "48.8566,2.3522", "48,856613;2,352222", "48,8566 2,3522", "-33.86882 151.20929", "(40.7128, -74.0060)",
		"POINT(2.35222 48.85661)", "geo:52.3676,4.9041", "48°51'24\"N 2°21'03\"E"} {
		if !d.isCoordinates(s) {
			t.Errorf("isCoordinates(%q) = false, want true", s)
		}
	}
	for _, s := range []string{"48.86, 2.35", "48,86;2,35", "1,234;5,678", "91.00001, 2.35222", "48.85661, 181.00001", "1.5, 2.5", "2024.0101, 12.3456"} {
		if d.isCoordinates(s) {
			t.Errorf("isCoordinates(%q) = true, want false", s)
		}
	}
	if !preciseIn("-74.0060", 180) || preciseIn("48.86", 90) || preciseIn("95.12345", 90) {
		t.Error("preciseIn: wrong answer for -74.0060, 48.86 or 95.12345")
	}
}

func TestNationalID(t *testing.T) {
	d := newDetector()
	for _, s := range []string{"123-45-6789", "12345678Z", "X1234567L", "111.444.777-35", "11144477735",
		"RSSMRA85T10A562S", "AB 12 34 56 C", "1 85 05 78 006 084 91"} {
		if !d.isNationalID(s) {
			t.Errorf("isNationalID(%q) = false, want true", s)
		}
	}
	for _, s := range []string{"000-12-3456", "666-12-3456", "12345678A", "111.444.777-36", "11111111111", "ORD-12345678"} {
		if d.isNationalID(s) {
			t.Errorf("isNationalID(%q) = true, want false", s)
		}
	}
}

func TestStreet(t *testing.T) {
	d := newDetector()
	for _, s := range []string{
		"1498 rue Bélanger", "Theodor-Heuss-Straße 34", "Av. Brigadeiro Faria Lima, 2170", "11120 Jasper Ave NW",
		"Ullevålsveien 14", "Kerkstraat 12a", "Via Roma 12, 00184 Roma", "Calle Mayor 5, 3º B", "Rua Augusta 45",
		"221B Baker Street", "Hauptstr. 5", "PO Box 1234", "350 Fifth Avenue", "Piazza Navona 34-36",
	} {
		if !d.isStreet(s) {
			t.Errorf("isStreet(%q) = false, want true", s)
		}
	}
	for _, s := range []string{"São Paulo", "Fifth Avenue Backpack", "Trail Runner 2", "Route 66 Mug", "Summit Pack 45L",
		"Via Ferrata Helmet", "5th Avenue"} {
		if d.isStreet(s) {
			t.Errorf("isStreet(%q) = true, want false", s)
		}
	}
}

func TestPersonName(t *testing.T) {
	d := newDetector()
	for _, s := range []string{"Luís Gonçalves", "Leonie Köhler", "François Tremblay", "María José García López",
		"Jan van der Berg", "Giulia Rossi", "Gonçalves, Luís", "J. Smith", "Ingrid Johansson", "Piotr Kowalski",
		"Dr. Anna Müller", "maria garcia", "GIULIA ROSSI"} {
		if d.isPersonName(s) < 1 {
			t.Errorf("isPersonName(%q) = %v, want 1", s, d.isPersonName(s))
		}
	}
	for _, s := range []string{"Summit Pack 45L", "Müller GmbH", "Rock And Roll", "San Francisco", "Heavy Metal Classic",
		"For Those About To Rock", "Ridgeline Boston", "Banco do Brasil S.A.", "Mary Street 12",
		"alpine trek backpack", "summit pack", "shipping refund"} {
		if d.isPersonName(s) > 0 {
			t.Errorf("isPersonName(%q) = %v, want 0", s, d.isPersonName(s))
		}
	}
}

// TestEastAsianName: family names first (and given first), romanised,
// Vietnamese with or without its diacritics; product names with Asian
// words and short word pairs are not names.
func TestEastAsianName(t *testing.T) {
	d := newDetector()
	for _, s := range []string{"Watanabe Hiroshi", "Hiroshi Watanabe", "Nguyen Van An", "Nguyễn Thị Mai", "Kim Min-jun",
		"Park Seo-yeon", "Wang Wei", "Zhang Xiao-ming", "Watanabe, Hiroshi", "tanaka yuki", "Tran Minh Quang"} {
		if d.isPersonName(s) < 1 {
			t.Errorf("isPersonName(%q) = %v, want 1", s, d.isPersonName(s))
		}
	}
	for _, s := range []string{"Osaka Ramen Kit", "Park Bench Cushion", "Song Book", "Sun Hat", "Oh My", "Mai Tai Syrup",
		"Kimchi Crock", "Long Sleeve Tee", "Moon Lamp", "Kyoto Matcha Tin"} {
		if d.isPersonName(s) >= 1 {
			t.Errorf("isPersonName(%q) = %v, want less than 1", s, d.isPersonName(s))
		}
	}
}

func TestSplitName(t *testing.T) {
	for in, want := range map[string]string{
		"BillingPostalCode": "billing postal code",
		"IPAddress":         "ip address",
		"address_line2":     "address line 2",
		"E-Mail":            "e mail",
		"Geburtsdatum":      "geburtsdatum",
		"prénom":            "prenom",
		"userID":            "user id",
	} {
		ws := splitName(in)
		got := ""
		for i, w := range ws {
			if i > 0 {
				got += " "
			}
			got += w
		}
		if got != want {
			t.Errorf("splitName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMatchName(t *testing.T) {
	rules := nameRules()
	for name, want := range map[string]category{
		"FirstName": catPersonName, "first_name": catPersonName, "Vorname": catPersonName, "prénom": catPersonName,
		"apellido": catPersonName, "achternaam": catPersonName, "cognome": catPersonName,
		"E-Mail": catEmail, "courriel": catEmail, "correo_electronico": catEmail, "email_address": catEmail,
		"ip_address": catIP, "Telefonnummer": catPhone, "telefone": catPhone, "Fax": catPhone,
		"Geburtsdatum": catBirth, "date_de_naissance": catBirth, "fecha_nacimiento": catBirth, "DOB": catBirth,
		"password_hash": catPassword, "Passwort": catPassword, "senha": catPassword, "wachtwoord": catPassword,
		"api_key": catKey, "iban": catBank, "Kontonummer": catBank, "ssn": catNationalID,
		"codice_fiscale": catNationalID, "Steuernummer": catNationalID, "BSN": catNationalID,
		"salary": catPay, "Gehalt": catPay, "sueldo": catPay, "BillingAddress": catAddress,
		"PostalCode": catAddress, "Postleitzahl": catAddress, "notes": catNotes, "Bemerkung": catNotes,
		"username": catAccount, "mac_address": catMAC, "access_token": catToken,
	} {
		m, ok := matchName(rules, splitName(name))
		if !ok || m.cat != want {
			t.Errorf("matchName(%q) = %v, %v; want category %v", name, m.cat, ok, want)
		}
	}
	for _, name := range []string{"Title", "Total", "InvoiceDate", "Composer", "UnitPrice", "Country", "hotel",
		"payment_method", "keyboard", "sort_key", "secretary_id", "Milliseconds", "status"} {
		if m, ok := matchName(rules, splitName(name)); ok && !m.people && !(m.cat == catKey && name == "sort_key") {
			t.Errorf("matchName(%q) = %v, want no match", name, m.cat)
		}
	}
}

func TestEmbeddedEmail(t *testing.T) {
	d := newDetector()
	for s, want := range map[string]kind{
		`{"event":"signup","email":"ana@example.org","plan":"pro"}`: kindEmail,
		"To: ana@example.org; bo@example.com":                       kindEmail,
		`{"event":"renewal","plan":"pro","qty":2}`:                  kindNone,
		"@ridgeline on social media":                                kindNone,
	} {
		if got := d.kindOf(s); got != want {
			t.Errorf("kindOf(%q) = %v, want %v", s, got.what(), want.what())
		}
	}
}
