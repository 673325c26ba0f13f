# In the guest (tests/vm/run.sh): pmu_check's lines, then what the kernel
# said of its PMU when it probed it.
./pmu_check
rc=$?
dmesg | sed -n 's/^\[[ 0-9.]*\] hw perfevents: /figure kernel_pmu /p'
exit $rc
