package recall

import "slices"

// sorted orders an answer's results best first by the score they show;
// equal scores keep the ranking's order. The passages are chosen by the
// fused ranking (its first MaxResults), so which ones come back is the
// ranking's decision; the order in which a person or the model reads them
// follows the score printed beside each. The LoCoMo benchmark scores the
// ranking's own order (x.search), which is also what decides the set at
// every k.
func sorted(r *Response, err error) (*Response, error) {
	if err != nil || r == nil {
		return r, err
	}
	slices.SortStableFunc(r.Results, func(a, b Result) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return r, nil
}
