#!/bin/busybox sh
# /init of the FabricEmu endpoint VM: load modules, bring the network and the
# soft RDMA device up, then hand over to the guest agent as PID 1.
# Kernel command line: fabemu.name= fabemu.ip=A.B.C.D/N fabemu.mtu= fabemu.dev=rxe|siw
#   fabemu.tcp_ecn=0|1|2 (the guest TCP's ECN mode: siw runs on it)
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mkdir -p /proc /sys /dev /tmp /run
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t configfs configfs /sys/kernel/config 2>/dev/null

status=/run/fabemu-init.status
fail() { echo "fabemu-init: $*" | tee -a "$status" >/dev/console; }

name=endpoint ip= mtu=1500 dev=rxe tcp_ecn=
for arg in $(cat /proc/cmdline); do
  case "$arg" in
    fabemu.name=*) name=${arg#*=} ;;
    fabemu.ip=*) ip=${arg#*=} ;;
    fabemu.mtu=*) mtu=${arg#*=} ;;
    fabemu.dev=*) dev=${arg#*=} ;;
    fabemu.tcp_ecn=*) tcp_ecn=${arg#*=} ;;
  esac
done
hostname "$name"

while read -r module; do
  case "$module" in ''|'#'*) continue ;; esac
  insmod "/lib/modules/$module" 2>/dev/null || grep -q "^$(basename "$module" .ko | tr - _) " /proc/modules \
    || fail "insmod $module failed"
done < /etc/fabemu/modules.order
[ "$dev" = siw ] && { insmod /lib/modules/siw.ko || fail "insmod siw.ko failed"; }

[ -n "$tcp_ecn" ] && { echo "$tcp_ecn" > /proc/sys/net/ipv4/tcp_ecn || fail "cannot set tcp_ecn $tcp_ecn"; }
ip link set lo up
ip link set eth0 mtu "$mtu" || fail "cannot set MTU $mtu on eth0"
[ -n "$ip" ] && { ip addr add "$ip" dev eth0 || fail "cannot set address $ip"; }
# No duplicate address detection: the fabric's addresses are unique by construction,
# and while DAD runs (up to 2 s) the link-local address, rxe's GID 0 for RoCEv2 over
# IPv6, is tentative and a QP cannot reach RTR with it.
echo 0 > /proc/sys/net/ipv6/conf/eth0/accept_dad 2>/dev/null
echo 0 > /proc/sys/net/ipv6/conf/eth0/dad_transmits 2>/dev/null
ip link set eth0 up || fail "eth0 does not come up"
ethtool -K eth0 tso off gso off gro off >/dev/null 2>&1

rdma link add "${dev}0" type "$dev" netdev eth0 || fail "rdma link add ${dev}0 type $dev failed"
state=""
for i in $(seq 1 100); do
  state=$(cat "/sys/class/infiniband/${dev}0/ports/1/state" 2>/dev/null)
  case "$state" in *ACTIVE*) break ;; esac
  sleep 0.1
done
case "$state" in *ACTIVE*) ;; *) fail "${dev}0 port is not ACTIVE (state: ${state:-none})" ;; esac
# Ready means usable: the IPv6 link-local address (GID 0) is there and not tentative.
for i in $(seq 1 50); do
  ll=$(ip -6 addr show dev eth0 scope link 2>/dev/null)
  case "$ll" in *fe80*) case "$ll" in *tentative*) ;; *) break ;; esac ;; esac
  sleep 0.1
done

port=
for p in /sys/class/virtio-ports/*; do
  [ "$(cat "$p/name" 2>/dev/null)" = org.fabemu.agent ] && port=/dev/$(basename "$p")
done
[ -n "$port" ] || fail "no virtio-serial port org.fabemu.agent"
echo "fabemu-init: $name ready, ${dev}0 on eth0 ${ip} mtu ${mtu}" >/dev/console
exec /usr/sbin/fabemu-agent --port "$port" --name "$name" --device "${dev}0" --status "$status"
