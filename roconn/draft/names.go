package draft

import (
	"strings"
	"unicode"
)

// A category is a kind of private column, as its name shows it.
type category uint8

const (
	catNone category = iota
	catPassword
	catHash
	catToken
	catKey
	catEmail
	catIP
	catMAC
	catPhone
	catBank
	catNationalID
	catBirth
	catPay
	catPersonName
	catAddress
	catNotes
	catSensitive
	catAccount
)

// what is the category as a reason says it.
func (c category) what() string {
	switch c {
	case catPassword:
		return "a password or PIN"
	case catHash:
		return "a hash"
	case catToken:
		return "a token or secret"
	case catKey:
		return "a key"
	case catEmail:
		return "an e-mail address"
	case catIP:
		return "an IP address"
	case catMAC:
		return "a MAC address"
	case catPhone:
		return "a phone or fax number"
	case catBank:
		return "a bank account or payment card"
	case catNationalID:
		return "a national identity, passport or tax number"
	case catBirth:
		return "a date or place of birth"
	case catPay:
		return "pay or income"
	case catPersonName:
		return "a person's name"
	case catAddress:
		return "a street address or postal code"
	case catNotes:
		return "free-text notes"
	case catSensitive:
		return "health, religion or other special-category data"
	case catAccount:
		return "a user name or login"
	}
	return ""
}

// contactLike reports whether a name that says c can also be about c rather
// than hold it: email_verified, phone_type, address_id, address_city.
func (c category) contactLike() bool {
	switch c {
	case catEmail, catIP, catMAC, catPhone, catPersonName, catAddress, catAccount:
		return true
	}
	return false
}

// A nameRule recognises a category from a column's name.
//
// phrases are folded word sequences; a phrase matches when the name's words
// hold it contiguously, written with or without separators ("first name"
// matches first_name, FirstName, firstname and FIRST-NAME). stems are
// folded substrings matched inside the whole name with its separators
// removed, for compounds (Geburtsdatum, Kundentelefonnummer); they are at
// least six letters long. people marks phrases that say private only in a
// table whose rows are people (a product's "name" is not a person's).
type nameRule struct {
	cat     category
	phrases []string
	stems   []string
	people  []string // phrases that count only in a table of people
}

// nameRules are tried in order; the first that matches decides. The more
// specific come first: email_address is an e-mail, not an address, and
// password_hash a password.
func nameRules() []nameRule {
	return []nameRule{
		{cat: catPassword,
			phrases: []string{"password", "passwd", "pwd", "passphrase", "passcode", "pin", "pin code", "pincode",
				"passwort", "kennwort", "mot de passe", "mdp", "contrasena", "senha", "palavra passe",
				"parola d ordine", "wachtwoord"},
			stems: []string{"password", "passwort", "kennwort", "wachtwoord", "contrasena", "motdepasse"}},
		{cat: catHash, phrases: []string{"hash", "hashed", "password digest", "pw hash"}},
		{cat: catToken,
			phrases: []string{"token", "access token", "refresh token", "auth token", "api token", "session token",
				"session id", "sessionid", "session key", "csrf", "otp", "totp", "mfa secret", "2fa secret",
				"cookie", "secret", "client secret", "geheimnis", "secreto", "segredo", "segreto", "jwt", "bearer"},
			stems: []string{"accesstoken", "refreshtoken", "apitoken", "authtoken", "clientsecret"}},
		{cat: catKey,
			phrases: []string{"key", "api key", "apikey", "private key", "secret key", "access key", "license key",
				"licence key", "encryption key", "signing key", "schluessel", "schlussel", "cle", "clave", "chave",
				"chiave", "sleutel"},
			stems: []string{"apikey", "privatekey", "secretkey", "accesskey", "licensekey", "lizenzschlussel"}},
		{cat: catEmail,
			phrases: []string{"email", "mail", "email address", "mail address", "courriel", "correo", "correo electronico",
				"mailadresse", "emailadresse", "emailadres", "mailadres", "posta elettronica", "pec", "adresse mail",
				"adresse email", "endereco email", "indirizzo email"},
			stems: []string{"emailadres", "mailadress", "courriel"}},
		{cat: catIP,
			phrases: []string{"ip", "ip address", "ipaddr", "ipv4", "ipv6", "remote addr", "remote address", "client ip",
				"source ip", "src ip", "dest ip", "x forwarded for", "forwarded for", "ip adresse", "adresse ip",
				"direccion ip", "endereco ip", "indirizzo ip", "ip adres"},
			stems: []string{"ipaddress", "ipadresse", "ipadres", "remoteaddr"}},
		{cat: catMAC, phrases: []string{"mac", "mac address", "macaddr", "hwaddr", "hardware address", "bssid"},
			stems: []string{"macaddress", "macadresse"}},
		{cat: catPhone,
			phrases: []string{"phone", "phone number", "phone no", "telephone", "tel", "tel no", "telefon", "telefono",
				"telefone", "telemovel", "mobile", "mobile number", "mobile phone", "cell", "cellphone", "cell phone",
				"fax", "handy", "mobil", "portable", "gsm", "celular", "cellulare", "telefoon", "mobiel", "whatsapp",
				"msisdn", "rufnummer", "numero de telephone", "numero telefono", "numero de telefono", "landline"},
			stems: []string{"telefon", "telephon", "phonenumber", "rufnummer", "handynummer", "mobilnummer",
				"faxnummer", "cellphone", "mobilephone", "homephone", "workphone"}},
		{cat: catBank,
			phrases: []string{"iban", "account number", "account no", "acct no", "acct number", "acct num", "bank account",
				"bank account number", "routing number", "sort code", "card number", "card no", "card num", "cardnumber",
				"credit card", "creditcard", "debit card", "cc number", "ccnum", "ccn", "pan", "cvv", "cvc", "cvv2",
				"kontonummer", "bankverbindung", "kreditkarte", "kartennummer", "numero carte", "carte bancaire",
				"carte credit", "rib", "numero de compte", "numero compte", "numero cuenta", "numero de cuenta",
				"cuenta bancaria", "tarjeta", "numero tarjeta", "tarjeta credito", "conta bancaria", "numero conta",
				"cartao", "cartao credito", "conto corrente", "carta di credito", "numero carta", "rekeningnummer",
				"bankrekening", "creditcardnummer"},
			stems: []string{"creditcard", "cardnumber", "kreditkart", "kontonummer", "rekeningnummer", "accountnumber",
				"bankaccount", "iban"}},
		{cat: catNationalID,
			phrases: []string{"ssn", "social security", "social security number", "national id", "national insurance",
				"national insurance number", "nino", "nin", "passport", "passport number", "passport no",
				"driver license", "drivers license", "driving licence", "driver licence", "driving license",
				"id card", "identity card", "identity number", "tax id", "taxid", "tax number", "tin", "vat id",
				"vat number", "vat no", "ein", "itin", "steuer id", "steuerid", "steuernummer", "ust id", "ustid",
				"personalausweis", "ausweisnummer", "reisepass", "svnr", "nir", "numero securite sociale",
				"securite sociale", "insee", "numero fiscal", "passeport", "carte identite", "cni", "dni", "nie", "nif",
				"nss", "pasaporte", "documento identidad", "cedula", "curp", "rfc", "rut", "cpf", "rg",
				"cartao cidadao", "passaporte", "nis", "pis", "codice fiscale", "partita iva", "carta identita",
				"passaporto", "tessera sanitaria", "bsn", "burgerservicenummer", "sofinummer", "paspoort",
				"identiteitskaart", "btw nummer"},
			stems: []string{"steuerident", "steuernummer", "sozialversicherung", "burgerservice", "personalausweis",
				"codicefiscale", "socialsecurity", "passport", "reisepass", "nationalid"}},
		{cat: catBirth,
			phrases: []string{"birth", "birth date", "birthdate", "date of birth", "dob", "birthday", "born", "born on",
				"birth year", "birthyear", "birth place", "birthplace", "place of birth", "geburtsdatum", "geburtstag",
				"naissance", "date naissance", "date de naissance", "fecha nacimiento", "fecha de nacimiento",
				"nacimiento", "cumpleanos", "data nascimento", "data de nascimento", "nascimento", "data di nascita",
				"nascita", "compleanno", "geboortedatum", "geboorte", "verjaardag"},
			stems: []string{"birth", "geburt", "geboorte", "naissance", "nacimiento", "nascimento", "nascita"}},
		{cat: catPay,
			phrases: []string{"salary", "salaries", "wage", "wages", "pay", "payroll", "pay rate", "payrate", "hourly pay",
				"compensation", "remuneration", "net pay", "gross pay", "gehalt", "lohn", "verguetung", "vergutung",
				"salaire", "paie", "salario", "sueldo", "nomina", "retribucion", "ordenado", "vencimento", "stipendio",
				"retribuzione", "salaris", "loon", "jaarsalaris", "maandsalaris"},
			stems:  []string{"salary", "salaire", "salario", "salaris", "gehalt", "payroll", "stipendi", "bruttolohn", "nettolohn"},
			people: []string{"income", "earnings", "bonus", "einkommen", "revenu", "ingresos", "rendimento", "reddito", "inkomen", "commission"}},
		{cat: catPersonName,
			phrases: []string{"first name", "firstname", "given name", "givenname", "forename", "fore name", "middle name",
				"middlename", "last name", "lastname", "surname", "family name", "familyname", "maiden name", "full name",
				"fullname", "vorname", "nachname", "familienname", "rufname", "geburtsname", "prenom", "nom de famille",
				"nom famille", "apellido", "apellidos", "primer apellido", "segundo apellido", "nombre completo",
				"nombre y apellidos", "sobrenome", "nome completo", "cognome", "nome e cognome", "voornaam",
				"achternaam", "tussenvoegsel", "roepnaam", "contact person", "contact name", "ansprechpartner",
				"cardholder", "card holder", "account holder", "holder name", "beneficiary", "beneficiary name",
				"recipient name", "sender name", "signatory", "guardian", "parent name", "spouse", "emergency contact",
				"customer name", "client name", "employee name", "patient name", "member name", "person name",
				"owner name", "kundenname", "nom client", "nombre cliente", "nome cliente", "klantnaam"},
			stems:  []string{"firstname", "lastname", "surname", "vorname", "nachname", "voornaam", "achternaam", "cognome", "apellido", "fullname"},
			people: []string{"name", "nom", "nombre", "nome", "naam", "navn", "namn", "display name", "displayname", "nickname"}},
		{cat: catAddress,
			phrases: []string{"address", "addr", "address line", "address1", "address2", "address3", "addr1", "addr2",
				"street", "street address", "house number", "housenumber", "house no", "apartment", "apt",
				"zip", "zip code", "zipcode", "postal code", "postalcode", "postcode", "post code", "plz", "postleitzahl",
				"anschrift", "adresse", "strasse", "hausnummer", "code postal", "rue", "direccion", "domicilio", "calle",
				"codigo postal", "endereco", "morada", "logradouro", "cep", "indirizzo", "civico", "adres", "straat",
				"huisnummer"},
			stems: []string{"address", "adresse", "anschrift", "postleitzahl", "hausnummer", "postalcode", "zipcode", "strasse", "huisnummer", "logradouro", "direccion", "indirizzo"}},
		{cat: catNotes,
			phrases: []string{"notes", "note", "comment", "comments", "remark", "remarks", "memo", "annotation",
				"annotations", "bemerkung", "bemerkungen", "notiz", "notizen", "kommentar", "anmerkung", "remarque",
				"remarques", "commentaire", "commentaires", "observation", "observations", "nota", "notas",
				"observacion", "observaciones", "comentario", "comentarios", "observacao", "observacoes", "commento",
				"commenti", "annotazione", "opmerking", "opmerkingen", "notitie", "notities", "toelichting"}},
		{cat: catSensitive,
			phrases: []string{"diagnosis", "diagnose", "diagnoses", "medical", "medical history", "disease", "illness",
				"medication", "medications", "allergy", "allergies", "disability", "religion", "religious", "ethnicity",
				"ethnic", "sexual orientation", "blood type", "blood group", "criminal record", "convictions",
				"political", "union membership", "biometric", "fingerprint", "dna", "genetic", "krankheit", "konfession",
				"maladie", "diagnostic", "enfermedad", "diagnostico", "doenca", "malattia", "ziekte", "religie"},
			people: []string{"health", "condition", "gesundheit", "sante", "salud", "saude", "salute", "gezondheid"}},
		{cat: catAccount,
			people: []string{"handle"},
			phrases: []string{"username", "user name", "login", "login name", "screen name", "benutzername",
				"nom utilisateur", "nom d utilisateur", "identifiant", "nombre de usuario", "nome utente",
				"nome de usuario", "gebruikersnaam"},
			stems: []string{"username", "benutzername", "gebruikersnaam"}},
	}
}

// notKey are the words before "key" that make it a key of a table or a
// map, not a secret: sort_key, primary_key, translation_key.
func notKey(w string) bool {
	switch w {
	case "sort", "partition", "primary", "foreign", "natural", "surrogate", "composite", "lookup", "group",
		"cache", "translation", "i18n", "setting", "settings", "config", "map", "row", "idempotency", "dedup",
		"dedupe", "unique", "business", "object", "storage", "s3", "file", "range", "shard", "join", "index",
		"public", "music", "keyboard", "hot", "short", "message", "msg", "label", "locale", "lang", "field", "attr", "attribute":
		return true
	}
	return false
}

// qualifier reports whether w, a word of a name beside a contact category's
// words, makes the column about the thing rather than the thing itself:
// email_verified, phone_type, address_id, address_city, has_email.
func qualifier(w string) bool {
	switch w {
	case "id", "ids", "uuid", "guid", "count", "cnt", "counter", "total", "type", "kind", "status", "state",
		"verified", "confirmed", "validated", "valid", "verification", "flag", "format", "length", "len",
		"domain", "provider", "template", "subject", "opt", "optin", "opted", "optout", "consent", "preference",
		"preferences", "pref", "enabled", "disabled", "allowed", "required", "visible", "visibility", "public",
		"bounced", "bounce", "sent", "opened", "clicked", "at", "on", "time", "changed", "updated", "created",
		"label", "category", "city", "town", "country", "region", "province", "county", "district", "prefix",
		"lat", "lng", "lon", "latitude", "longitude", "geo", "version", "list", "campaign", "frequency", "language",
		"lang", "locale", "web", "url", "wallet", "contract", "memory", "mem", "book", "count_", "last4", "suffix",
		"is", "has", "can", "allow", "send", "needs", "num", "use", "uses", "show", "hide", "hidden", "ort", "stadt",
		"ville", "ciudad", "cidade", "citta", "stad", "land", "pays", "pais", "paese", "kreis", "bundesland":
		return true
	}
	return false
}

// splitName splits a column or table name into folded words: at
// separators, at a change from lower to upper case, between letters and
// digits, and before the last capital of a run of capitals followed by a
// lower-case letter. "BillingPostalCode" gives billing, postal, code;
// "IPAddress" ip, address; "address_line2" address, line, 2;
// "E-Mail" e, mail.
func splitName(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, fold(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(cur) > 0 {
			prev := cur[len(cur)-1]
			switch {
			case unicode.IsLower(prev) && unicode.IsUpper(r),
				unicode.IsDigit(prev) != unicode.IsDigit(r):
				flush()
			case unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// A nameMatch is a rule's category found in a column name, and which words
// of the name it covered.
type nameMatch struct {
	cat      category
	from, to int  // the words [from, to) that matched; to == 0 for a stem
	people   bool // the match counts only in a table of people
}

// matchName finds the first rule that matches the folded words ws.
func matchName(rules []nameRule, ws []string) (nameMatch, bool) {
	joined := strings.Join(ws, "")
	for _, r := range rules {
		if from, to, ok := matchPhrases(r.phrases, ws); ok {
			if r.cat == catKey && from > 0 && notKey(ws[from-1]) {
				continue
			}
			return nameMatch{cat: r.cat, from: from, to: to}, true
		}
		for _, st := range r.stems {
			if strings.Contains(joined, st) {
				return nameMatch{cat: r.cat}, true
			}
		}
		if from, to, ok := matchPhrases(r.people, ws); ok {
			return nameMatch{cat: r.cat, from: from, to: to, people: true}, true
		}
	}
	return nameMatch{}, false
}

// matchPhrases reports the first phrase found in ws, as the span of words it
// covers. A phrase matches a run of words whose concatenation equals the
// phrase without its spaces.
func matchPhrases(phrases []string, ws []string) (from, to int, ok bool) {
	for _, p := range phrases {
		target := strings.ReplaceAll(p, " ", "")
		for i := range ws {
			acc := ""
			for j := i; j < len(ws) && len(acc) < len(target); j++ {
				acc += ws[j]
				if acc == target {
					return i, j + 1, true
				}
			}
		}
	}
	return 0, 0, false
}

// qualified reports whether a word of ws outside [from, to) is a qualifier,
// or the name starts with one (has_email, is_mobile).
func qualified(ws []string, m nameMatch) bool {
	for i, w := range ws {
		if m.to > 0 && i >= m.from && i < m.to {
			continue
		}
		if qualifier(w) {
			return true
		}
	}
	return false
}

// payQualifier reports whether w, beside a pay word, makes the column about
// how or when pay happens rather than how much: pay_method, pay_date.
func payQualifier(w string) bool {
	switch w {
	case "method", "methods", "type", "status", "date", "day", "period", "frequency", "schedule", "currency",
		"id", "terms", "term", "mode", "option", "options", "channel", "provider", "link", "url", "button", "at":
		return true
	}
	return false
}

// peopleWord reports whether the folded word w names a kind of person, in
// one of the supported languages, singular or plural.
func peopleWord(w string) bool {
	switch w {
	case "customer", "client", "user", "person", "people", "employee", "staff", "member", "contact", "patient",
		"student", "pupil", "teacher", "subscriber", "buyer", "guest", "visitor", "applicant", "candidate",
		"driver", "passenger", "owner", "tenant", "landlord", "lead", "prospect", "recipient", "sender",
		"worker", "volunteer", "donor", "doctor", "physician", "nurse", "agent", "rep", "representative",
		"profile", "consumer", "shopper", "traveler", "traveller", "attendee", "participant", "player",
		"individual", "resident", "citizen", "borrower", "lender", "debtor", "policyholder", "insured",
		"kunde", "kunden", "mitarbeiter", "personen", "benutzer", "nutzer", "mitglied", "mitglieder", "schueler",
		"schuler", "lehrer", "bewerber", "gast", "gaste", "patienten", "utilisateur", "employe", "salarie",
		"adherent", "eleve", "etudiant", "personne", "abonne", "cliente", "clientes", "usuario", "usuarios",
		"empleado", "empleados", "persona", "personas", "socio", "socios", "paciente", "alumno", "estudiante",
		"trabajador", "funcionario", "colaborador", "aluno", "utente", "utenti", "dipendente", "dipendenti",
		"studente", "klant", "klanten", "gebruiker", "medewerker", "werknemer", "lid", "leden", "leerling",
		"deelnemer", "relatie", "personeel", "contacto", "contatto", "contato":
		return true
	}
	if strings.HasSuffix(w, "s") && len(w) > 3 {
		base := strings.TrimSuffix(w, "s")
		if peopleWord(base) {
			return true
		}
		if strings.HasSuffix(w, "ies") {
			return false
		}
	}
	return false
}

// creditWord reports whether the folded word w names someone credited in a
// catalogue (an artist, an author) or a thing that has a title or a product
// name: names in such tables and columns are public, not private.
func creditWord(w string) bool {
	switch strings.TrimSuffix(w, "s") {
	case "artist", "band", "composer", "author", "writer", "director", "actor", "actresse", "performer",
		"musician", "singer", "creator", "lyricist", "producer", "conductor", "illustrator", "narrator", "cast",
		"painter", "architect", "photographer", "kuenstler", "kunstler", "autor", "autore", "regisseur",
		"artiste", "auteur", "realisateur", "compositeur", "artista", "compositor", "cantante", "regista",
		"kunstenaar", "componist", "schrijver", "publisher", "brand", "manufacturer", "maker", "label",
		"album", "track", "song", "movie", "film", "book", "product", "item", "genre", "playlist", "media",
		"mediatype", "category", "catalog", "catalogue", "title", "sku", "article", "artikel", "produit",
		"producto", "produto", "prodotto", "team", "club", "venue", "studio", "character", "show", "episode",
		"series", "game", "app", "course", "event", "store", "shop", "warehouse", "city", "country", "region":
		return true
	}
	return false
}

// publicPeopleWord reports whether the folded word w names people whose
// names are public credits, so that even an explicit first_name in their
// table is kept.
func publicPeopleWord(w string) bool {
	switch strings.TrimSuffix(w, "s") {
	case "artist", "band", "composer", "author", "writer", "director", "actor", "performer", "musician",
		"singer", "lyricist", "conductor", "illustrator", "narrator", "painter", "photographer", "kuenstler",
		"kunstler", "autor", "autore", "regisseur", "artiste", "auteur", "compositeur", "artista", "compositor",
		"cantante", "regista", "kunstenaar", "componist", "schrijver":
		return true
	}
	return false
}

// geoWord reports whether the folded word w says a number is a coordinate.
func geoWord(w string) bool {
	switch w {
	case "lat", "lng", "lon", "long", "latitude", "longitude", "coord", "coords", "coordinate", "coordinates",
		"geo", "gps", "location", "loc", "position", "pos", "geoloc", "geolocation", "breitengrad", "laengengrad",
		"langengrad", "breite", "laenge", "lange", "latitud", "longitud", "latitudine", "longitudine",
		"lengtegraad", "breedtegraad", "standort", "ubicacion", "localizacao", "posizione", "locatie":
		return true
	}
	return false
}

// coarsePlaceWord reports whether the folded word w names a place coarser
// than a street (a city, a region, a country) or an organisation. Such
// columns are kept, except that in a table of people the local ones
// (localPlaceWord) are part of the person's address.
func coarsePlaceWord(w string) bool {
	if localPlaceWord(w) {
		return true
	}
	switch w {
	case "country", "land", "pays", "pais", "paese", "company", "firma", "empresa", "societe",
		"azienda", "bedrijf", "employer", "organisation", "organization":
		return true
	}
	return false
}

// localPlaceWord reports whether the folded word w names a place finer than
// a country: a city, a state or a region. With a street line and a postal
// code it makes an address; in a small table of people it singles them out.
func localPlaceWord(w string) bool {
	switch w {
	case "city", "town", "state", "region", "province", "county", "district", "stadt", "ort",
		"bundesland", "ville", "departement", "ciudad", "provincia", "cidade", "estado",
		"citta", "regione", "stad", "gemeente", "provincie":
		return true
	}
	return false
}
