"""Teaching the local model from verified kernels (issue 15): a training set built only from
kernels that pass verification on specs that pass the spec check, with held-out tasks kept out."""
