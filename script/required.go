package script

// Required names the inputs of the script called name that a caller must
// give: required, with no default. An unknown or broken script is an
// error, as Load's.
func (l *Library) Required(name string) ([]string, error) {
	s, err := l.Load(name)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, in := range s.Inputs {
		if in.Required && !in.HasDefault {
			out = append(out, in.Name)
		}
	}
	return out, nil
}
