"""memory-bw: host<->device, device and peer copy bandwidth."""
