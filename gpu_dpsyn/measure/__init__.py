"""The only code that reads private records.  Every function here charges the
accountant first, then counts and adds exact noise; everything outside this package
works on the noisy values it returns (post-processing)."""
