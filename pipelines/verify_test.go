package pipelines

import (
	"testing"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/settings"
)

// TestResolveVerify: --verify=auto, the default, settles the uncertain
// pairs on their dense samples at every size under a resemblance policy;
// under a containment policy it verifies them exactly up to
// AutoVerifyBytes and not above; and it does nothing in the super-shingle
// modes.
func TestResolveVerify(t *testing.T) {
	def, containment := testConfig().Policy, policy.Policy{Containment: 0.8}
	for _, c := range []struct {
		mode   settings.Mode
		policy policy.Policy
		bytes  int64
		want   settings.Verify
	}{
		{settings.ModePairs, def, 1, settings.VerifyDense},
		{settings.ModePairs, def, AutoVerifyBytes + 1, settings.VerifyDense},
		{settings.ModePairs, def, 6 << 40, settings.VerifyDense},
		{settings.ModePairs, containment, AutoVerifyBytes, settings.VerifyUncertain},
		{settings.ModePairs, containment, AutoVerifyBytes + 1, settings.VerifyNone},
		{settings.ModeSuperShingle, def, 1, settings.VerifyNone},
	} {
		cfg := testConfig()
		cfg.Verify, cfg.Mode, cfg.Policy = settings.VerifyAuto, c.mode, c.policy
		resolveVerify(&cfg, c.bytes)
		if cfg.Verify != c.want {
			t.Errorf("--verify=auto, %s, %s, %d bytes: %q, want %q", c.mode, c.policy, c.bytes, cfg.Verify, c.want)
		}
	}
}
