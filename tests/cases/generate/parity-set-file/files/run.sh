#!/bin/sh
echo "ready"
