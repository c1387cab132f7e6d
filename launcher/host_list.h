// Host lists of multi-host jobs: Open MPI's --host "a:2,b:2" and hostfile forms, parsed into
// plain data so that rrun can check them (and the rank count against their slots) before it
// hands the job to mpirun (see delegation.h).
//
// parseHostList: comma-separated NAME[:SLOTS] entries; SLOTS a positive integer, 1 when left out
// (as in Open MPI). parseHostfile: one host a line, "NAME [slots=N] [max_slots=N]", '#' starts
// a comment; a line without slots= leaves the count to mpirun (slots 0 here: unknown). Names
// are host names or IPv4 addresses: letters, digits, '.', '-', '_'. Errors are values: a
// message naming the bad entry (and the line, for hostfiles).
#pragma once

#include <string>
#include <vector>

namespace rrt::launcher {

struct HostSlots {
  std::string name;
  int slots = 0;  // 0: not stated (hostfile line without slots=)
};

struct HostListResult {
  bool ok = false;
  std::vector<HostSlots> hosts;  // when ok, in the given order
  std::string error;             // when !ok
};

HostListResult parseHostList(const std::string& text);
HostListResult parseHostfile(const std::string& text);
// Reads and parses the file; an unreadable file is an error naming it.
HostListResult readHostfile(const std::string& path);

// The slots the list states, or -1 when some entry leaves its count to mpirun.
long statedSlots(const std::vector<HostSlots>& hosts);

}  // namespace rrt::launcher
