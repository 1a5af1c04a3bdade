;; Three rooms, five balls in two directions: three balls go from
;; rooma to roomb and two from roomb to roomc; the robot starts in
;; roomc, so the order of the trips decides the plan length.
(define (problem gripper-p05)
  (:domain gripper)
  (:objects
    rooma roomb roomc - room
    ball1 ball2 ball3 ball4 ball5 - ball
    left right - gripper)
  (:init
    (at-robby roomc)
    (free left)
    (free right)
    (at ball1 rooma)
    (at ball2 rooma)
    (at ball3 rooma)
    (at ball4 roomb)
    (at ball5 roomb)
    (= (total-cost) 0))
  (:goal (and
    (at ball1 roomb)
    (at ball2 roomb)
    (at ball3 roomb)
    (at ball4 roomc)
    (at ball5 roomc)))
  (:metric minimize (total-cost)))
