// SPDX-License-Identifier: Apache-2.0
#pragma once
// The user's cache for PeakLens, and the copies it keeps there: native copies of huge
// traces of other formats (copies/) and copies of files on other machines (remote/). Each
// is made again whenever it is wanted, so the cache keeps what was used last within a
// limit: PEAKLENS_CACHE_LIMIT bytes ("20GiB", "500MB", as --budget takes sizes; 0 for no
// limit), 20 GiB by default.

#include <cstdint>
#include <string>

namespace peaklens {

// $PEAKLENS_CACHE_DIR, else $XDG_CACHE_HOME/peaklens, else ~/.cache/peaklens; empty when
// none is known. Made by whoever writes into it.
std::string userCacheFolder();

// The limit in force (PEAKLENS_CACHE_LIMIT, or the default where it is unset or not a
// size); 0 for none.
std::int64_t cacheLimitBytes();

// A copy in the cache was used now: the last to go. Its use is its modification time.
void markCacheUsed(const std::string &copy);

// After `made` was written into the cache: the copies used least recently are removed
// until those left fit the limit. `made` stays, and so does any copy used in the last day
// (a window may still read from it), over the limit if need be; a copy still being
// written (its temporary) is neither counted nor removed, nor is anything else in the
// cache folder. Returns the bytes removed.
std::int64_t keepCacheWithinLimit(const std::string &made);

} // namespace peaklens
