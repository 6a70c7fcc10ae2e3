package features

import (
	"strings"
	"sync"

	gherkin "github.com/cucumber/gherkin/go/v42"

	"kubelab.dev/kubelab/internal/i18n"
)

// dialects are the Gherkin dialects of kubelab's languages.
var dialects = map[i18n.Lang]string{i18n.EN: "en", i18n.ZH: "zh-CN"}

// stepKeyword is a step keyword of a feature file ("Given ", "And ") in
// lang's Gherkin dialect ("假如 ", "而且 "): the drill shows its steps in
// the learner's language while they run in English.
func stepKeyword(kw string, lang i18n.Lang) string {
	if lang == i18n.EN || lang == "" {
		return kw
	}
	provider := gherkin.DialectsBuiltin()
	en, to := provider.GetDialect("en"), provider.GetDialect(dialects[lang])
	if to == nil {
		return kw
	}
	for kind, words := range en.Keywords {
		for _, w := range words {
			if w == "* " || strings.TrimSpace(w) != strings.TrimSpace(kw) {
				continue
			}
			for _, t := range to.Keywords[kind] {
				if t != "* " {
					return strings.TrimSpace(t) + " "
				}
			}
		}
	}
	return kw
}

// catalogs are the translations of the feature files a Library runs, by
// file, read once.
type catalogs struct {
	mu    sync.Mutex
	lang  i18n.Lang
	files map[string]*i18n.Catalog
}

// texts is the translation function of a feature file's texts: the
// identity in English or when the file has no catalog.
func (c *catalogs) texts(feature string) func(string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lang == i18n.EN || c.lang == "" {
		return func(s string) string { return s }
	}
	cat, ok := c.files[feature]
	if !ok {
		cat, _ = i18n.LoadCatalog(feature, c.lang) // a broken catalog: English, as drill loading already said
		if c.files == nil {
			c.files = map[string]*i18n.Catalog{}
		}
		c.files[feature] = cat
	}
	return func(s string) string {
		c.mu.Lock()
		defer c.mu.Unlock()
		return cat.T(s)
	}
}
