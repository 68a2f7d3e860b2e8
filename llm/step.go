package llm

import "context"

type stepKey struct{}

// WithStep names the step a model call serves (a prompt script's name),
// so that what counts calls can tell them apart; a call with no step is
// main-virtual's own.
func WithStep(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, stepKey{}, name)
}

// StepOf is the step ctx names ("" when none).
func StepOf(ctx context.Context) string {
	s, _ := ctx.Value(stepKey{}).(string)
	return s
}

type packetKey struct{}

// WithPacket carries the request packet a model call serves — a natural
// tool's nl_packet, as JSON — so that its trace shows the packet as the
// tool was sent it.
func WithPacket(ctx context.Context, packet []byte) context.Context {
	return context.WithValue(ctx, packetKey{}, packet)
}

// PacketOf is the packet ctx carries (nil when none).
func PacketOf(ctx context.Context) []byte {
	p, _ := ctx.Value(packetKey{}).([]byte)
	return p
}
