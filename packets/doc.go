// Package packets will own the nl_packet types that cross component
// boundaries: the natural packet {aim, scene, appendix, output_text_limit,
// output_file_limit}, the action packet, the result packet with the seed's
// limits, and the router that delivers packets to components by rule.
//
// It imports nothing of cyan's: every other package may depend on it.
package packets
