#!/usr/bin/env bash
# Start MariaDB and Redis on loopback if they are not answering; install them, and the headless
# browser of the site tests (Debian's chromium and chromium-driver), first on a fresh Debian
# machine. Idempotent: installs nothing that is there and does nothing when both already run.
set -euo pipefail

need_apt=()
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need_apt+=(mariadb-server mariadb-client)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
[ -x /usr/bin/chromedriver ] || need_apt+=(chromium-driver)
# a Chinese font, so that the site's Chinese screenshots show characters, not boxes
[ -d /usr/share/fonts/truetype/wqy ] || need_apt+=(fonts-wqy-microhei)
if [ ${#need_apt[@]} -gt 0 ]; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need_apt[@]}"
fi

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
fi

if ! mysqladmin -h 127.0.0.1 -u root ping >/dev/null 2>&1; then
  install -d -o mysql -g mysql /run/mysqld
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- \
    --user=mysql --bind-address=127.0.0.1 --port=3306
fi

for _ in $(seq 1 60); do
  if redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 && mysqladmin -h 127.0.0.1 -u root ping >/dev/null 2>&1; then
    echo "MariaDB and Redis are up"
    exit 0
  fi
  sleep 0.5
done
echo "MariaDB or Redis did not start" >&2
exit 1
