"""From noisy marginals to GUM's targets: denoising, consistency, low-count filtering
(post-processing of the measurements)."""
