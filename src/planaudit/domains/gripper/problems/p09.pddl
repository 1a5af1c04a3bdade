;; UNSOLVABLE: p04 with the (free left) and (free right) facts
;; removed; no gripper carries a ball either, so no ball can ever
;; be picked up.
(define (problem gripper-p09)
  (:domain gripper)
  (:objects
    rooma roomb - room
    ball1 ball2 ball3 ball4 - ball
    left right - gripper)
  (:init
    (at-robby rooma)
    (at ball1 rooma)
    (at ball2 rooma)
    (at ball3 rooma)
    (at ball4 rooma)
    (= (total-cost) 0))
  (:goal (and
    (at ball1 roomb)
    (at ball2 roomb)
    (at ball3 roomb)
    (at ball4 roomb)))
  (:metric minimize (total-cost)))
