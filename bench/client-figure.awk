# The figure a perftest client printed in `fabemu emulate` output (the lines after
# "--- h1:", h0 being the server): ib_write_bw's BW average (MB/s, 4th field of the
# 65536-byte line) or ib_send_lat's t_typical (us, 5th field of the 2-byte line).
/^--- h1:/ { c = 1 }
/^--- h0:/ { c = 0 }
c && $1 == 65536 && NF >= 4 { print $4; exit }
c && $1 == 2 && NF >= 5 { print $5; exit }
